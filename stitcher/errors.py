"""Every error stitcher raises on purpose. The CLI turns them into messages and exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """The exit codes of the `stitcher` command; scripts and cron jobs branch on these.

    The README's exit-code table lists the same values; tests/test_exit_codes.py checks each one
    through the installed script.
    """

    OK = 0
    #: An error: chunks or documents could not be written, the server failed or is unreachable.
    FAILED = 1
    #: The command was called wrongly: unknown flag, bad value, empty query, ambiguous name.
    USAGE = 2
    #: Ingest finished, but some inputs could not be read (they are named on stderr).
    UNREADABLE = 3
    #: `--prune` refused to delete (the listing looked wrong); nothing was deleted.
    PRUNE_REFUSED = 4
    #: Another ingest into the same collection is running; nothing was done (retry later or
    #: pass --wait). Not FAILED, so that a cron job overlapping the previous one can tell.
    BUSY = 5
    #: Interrupted (Ctrl-C, SIGINT); 128 + SIGINT as shells report it.
    INTERRUPTED = 130


class StitcherError(Exception):
    """Base class: a failure with a message meant for the user."""

    exit_code: ExitStatus = ExitStatus.FAILED


class UsageError(StitcherError):
    """The command was called wrongly (bad flag value, empty query, ...)."""

    exit_code = ExitStatus.USAGE


class AmbiguousError(UsageError):
    """A name matched several candidates; the message lists them."""


class ConfigError(StitcherError):
    """Configuration is missing or contradicts itself."""


class ConfigInvalid(UsageError):
    """stitcher.toml or a setting from the environment is malformed; the message says where."""


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

    exit_code = ExitStatus.BUSY


class PruneRefused(StitcherError):
    """`--prune` would delete documents on evidence that looks wrong (e.g. an empty folder);
    nothing was deleted. The message says why and how to override."""

    exit_code = ExitStatus.PRUNE_REFUSED


class ModelError(StitcherError):
    """The embedding model could not be loaded."""


class FilterError(UsageError):
    """A --where expression is malformed or names an unknown field."""
