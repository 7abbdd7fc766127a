"""Every error stitcher raises on purpose. The CLI turns them into messages and exit codes."""

from __future__ import annotations


class StitcherError(Exception):
    """Base class: a failure with a message meant for the user."""

    exit_code = 1


class UsageError(StitcherError):
    """The command was called wrongly (bad flag value, empty query, ...)."""

    exit_code = 2


class AmbiguousError(UsageError):
    """A name matched several candidates; the message lists them."""


class ConfigError(StitcherError):
    """Configuration is missing or contradicts itself."""


class ServerError(StitcherError):
    """The local Weaviate server could not be built, started, stopped or found."""


class ConnectionFailed(StitcherError):
    """The Weaviate server could not be reached."""


class AuthenticationFailed(StitcherError):
    """The Weaviate server refused the API key."""


class CollectionMissing(StitcherError):
    """The named collection does not exist."""


class SettingsMismatch(StitcherError):
    """The collection was built with other settings (model, dimension, chunking)."""


class LoadError(StitcherError):
    """One input file could not be read; the message names the file."""


class WriteFailed(StitcherError):
    """Some chunks could not be written even after retries."""


class LockHeld(StitcherError):
    """Another ingest holds the lock on this collection."""


class ModelError(StitcherError):
    """The embedding model could not be loaded."""


class FilterError(UsageError):
    """A --where expression is malformed or names an unknown field."""


class PruneRefused(StitcherError):
    """--prune would delete too much (or the listing looks wrong); nothing was deleted."""

    exit_code = 4
