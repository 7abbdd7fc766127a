"""Every error stitcher raises on purpose, and the one table of what each means as an exit status.

The library never spells a command-line flag: a message names a setting by its parameter name
through `setting("limit")`. `str(error)` shows that name (`limit`, or `max_delete=20` with a
value); the CLI's error boundary shows its own flag instead (`--limit`, `--max-delete 20`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import Literal


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
    #: Another ingest into the same collection is running; nothing was done (retry later, or
    #: queue behind it). Not FAILED, so that a cron job overlapping the previous one can tell.
    BUSY = 5
    #: Interrupted (Ctrl-C, SIGINT); 128 + SIGINT as shells report it.
    INTERRUPTED = 130


# Settings named in a message travel as "\x1fname\x1f" or "\x1fname\x1evalue-repr\x1ecli-value\x1f":
# unit and record separators, which no file name, query or server message carries.
_MARK, _PART = "\x1f", "\x1e"
_NAMED_SETTING = re.compile("\x1f([a-z_]+)(?:\x1e([^\x1e\x1f]*)\x1e([^\x1e\x1f]*))?\x1f")


def setting(name: str, *value: object) -> str:
    """A setting named in a message: the library's parameter `name`, with the value to give it
    when the message suggests one (`setting("max_delete", 20)`; `True` for a switch).

    Returns:
        A marker that `str()` of a StitcherError (and `worded`) turns into words.
    """
    if not value:
        return f"{_MARK}{name}{_MARK}"
    (given,) = value
    # As typed in a shell: `--source 'my docs'`.
    on_command_line = "" if given is True else shlex.quote(str(given))
    return f"{_MARK}{name}{_PART}{given!r}{_PART}{on_command_line}{_MARK}"


def names_a_setting(text: str) -> bool:
    """Whether `text` names a setting (so `worded` would change it)."""
    return _MARK in text


def worded(text: str, flags: Mapping[str, str] | None = None) -> str:
    """`text` with its named settings spelled out: as flags where `flags` maps a setting to one
    (`--max-delete 20`, `--wait`), else as the library's parameters (`max_delete=20`, `wait`)."""

    def spell(found: re.Match[str]) -> str:
        name, library_value, cli_value = found.groups()
        flag = (flags or {}).get(name)
        if flag is not None:
            return f"{flag} {cli_value}" if cli_value else flag
        return f"{name}={library_value}" if library_value is not None else name

    return _NAMED_SETTING.sub(spell, text)


# C0 and C1 controls and DEL, plus the characters that end a line or reorder a terminal's text
# without being controls: U+2028/2029 (line/paragraph separator) and the bidi overrides and
# isolates that make a name read backwards (U+202A-202E, U+2066-2069).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str) -> str:
    """`text` with every control character shown as an escape: "\\n", "\\r", "\\t", "\\x1b",
    "\\u202e". Other characters, backslashes included, are kept as they are."""
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


class StitcherError(Exception):
    """Base class: a failure with a message meant for the user."""

    def __str__(self) -> str:
        return worded(super().__str__())

    def worded(self, flags: Mapping[str, str]) -> str:
        """The message with the settings it names spelled as `flags` maps them (see `worded`)."""
        return worded(super().__str__(), flags)

    @property
    def unworded(self) -> str:
        """The message with its settings still named, not yet spelled: for a message that carries
        this one on, so that whoever shows it (the CLI) still spells them its own way."""
        return super().__str__()

    @property
    def exit_status(self) -> ExitStatus:
        """What this failure means for a script (the table `_EXIT_STATUS_OF_ERROR`)."""
        return exit_status_of(self)


class UsageError(StitcherError):
    """The command was called wrongly (bad flag value, empty query, ...)."""


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


class TenancyMismatch(UsageError):
    """A tenant named for a single-tenant collection, or none for a multi-tenant one."""


class TenantMissing(CollectionMissing):
    """The named tenant does not exist in its (multi-tenant) collection."""


class SettingsMismatch(StitcherError):
    """The collection was built with other settings (model, dimension, chunking)."""


class LoadError(StitcherError):
    """One input file could not be read; the message names the file."""


class WriteFailed(StitcherError):
    """Some chunks could not be written even after retries."""


class InputsUnreadable(StitcherError):
    """An ingest finished, but some inputs could not be read (the summary names them)."""


class ListingIncomplete(StitcherError):
    """A whole-collection listing disagreed with the replicas' count (a replica is behind, or
    the collection was written to meanwhile); nothing was decided on it."""


class LockHeld(StitcherError):
    """Another ingest holds the lock on this collection."""


class PruneRefused(StitcherError):
    """`--prune` would delete documents on evidence that looks wrong (e.g. an empty folder);
    nothing was deleted. The message says why and how to override."""


class ModelError(StitcherError):
    """The embedding model could not be loaded."""


class DeviceUnavailable(UsageError):
    """The device asked for (`cuda`) is not there, or the model's engine cannot use it."""


class FilterError(UsageError):
    """A --where expression is malformed or names an unknown field."""


class EmptyDocument(LoadError):
    """The file has no text to index (a placeholder): skipped with a notice, not an error."""


class SqlError(StitcherError):
    """The SQL query could not be run (syntax, missing table, or an attempt to write)."""


class ExportFileInvalid(StitcherError):
    """An export file is malformed, cut off or does not match its own counts and hash; the
    message names the line. Nothing was imported."""


class AmbiguousEntity(AmbiguousError):
    """A name fits several entities; `candidates` lists them (names only)."""

    def __init__(self, message: str, candidates: Sequence[str]) -> None:
        super().__init__(message)
        self.candidates = list(candidates)


class UnknownEntity(UsageError):
    """No entity has this name or alias."""


# -- raised and caught inside the library; what the user sees is the error it becomes ---------


class MetadataConflict(ValueError):
    """A metadata value cannot be stored in the property its key maps to (the store reports
    the chunk as not written, naming key and document)."""


class WireError(ValueError):
    """A search request on the wire is of another version or does not describe a
    SearchRequest (the caller then searches in-process)."""


# -- the server failed in a way that ended the run (stitcher.faults classifies) ---------------

#: What a server failure was (stitcher.faults.classify); only the first three may pass.
FaultKind = Literal["connection", "timeout", "server", "read_only", "schema", "refused"]


class ServerFault(StitcherError):
    """Weaviate failed in a way that ended the run; the message says what was stored."""

    def __init__(self, message: str, *, url: str, kind: FaultKind) -> None:
        super().__init__(message)
        self.url = url
        self.kind = kind

    def with_progress(self, stored: int, not_stored: int, unchecked: int = 0) -> ServerFault:
        """The same error, saying how many documents this run stored and how many it did not."""
        advice = _ADVICE.get(self.kind, "run again to finish")
        counts = f"{stored} document(s) stored, {not_stored} not stored"
        if unchecked:
            counts += f", {unchecked} not yet checked"
        return type(self)(f"{self.unworded}; {counts} — {advice}", url=self.url, kind=self.kind)


class ServerLost(ServerFault):
    """The connection to Weaviate was lost (refused, reset, server stopped or restarting)."""


class ServerTimeout(ServerFault):
    """Weaviate did not answer in time."""


class ServerFailed(ServerFault):
    """Weaviate kept answering with server errors (5xx)."""


class ServerRefusesWrites(ServerFault):
    """Weaviate refuses writes: its disk is full or the collection is read-only."""


class SchemaChanged(ServerFault):
    """The collection's schema is not the one stitcher made (a property removed or retyped)."""


class RequestRefused(ServerFault):
    """Weaviate refused a request that cannot succeed when repeated."""


_ADVICE: dict[FaultKind, str] = {
    # Verified on Weaviate 1.38: after ENOSPC its shards turn READONLY and, even when set back to
    # READY, a bucket keeps failing to flush its WAL until the server restarts.
    "read_only": "free disk space on the server and restart it, then run again",
    "schema": f"restore the property or ingest into a new {setting('collection')}",
}

#: The exit status of each kind of error, most specific first; any other StitcherError is FAILED.
_EXIT_STATUS_OF_ERROR: tuple[tuple[type[StitcherError], ExitStatus], ...] = (
    (LockHeld, ExitStatus.BUSY),
    (PruneRefused, ExitStatus.PRUNE_REFUSED),
    (UsageError, ExitStatus.USAGE),
    (InputsUnreadable, ExitStatus.UNREADABLE),
)

#: A run that ends with several problems (an ingest: documents not stored, a prune refused,
#: unreadable inputs) exits with the first of these it has: what a script must act on first.
_MOST_SERIOUS_FIRST: tuple[ExitStatus, ...] = (
    ExitStatus.FAILED,
    ExitStatus.BUSY,
    ExitStatus.USAGE,
    ExitStatus.PRUNE_REFUSED,
    ExitStatus.UNREADABLE,
)


def exit_status_of_problems(problems: Sequence[type[StitcherError]]) -> ExitStatus:
    """The exit status of a run that finished with these kinds of problem (none: OK), by the
    same table as a raised error's."""
    statuses = {_status_of_kind(kind) for kind in problems}
    return next((s for s in _MOST_SERIOUS_FIRST if s in statuses), ExitStatus.OK)


def _status_of_kind(kind: type[StitcherError]) -> ExitStatus:
    for base, status in _EXIT_STATUS_OF_ERROR:
        if issubclass(kind, base):
            return status
    return ExitStatus.FAILED


def exit_status_of(error: StitcherError) -> ExitStatus:
    """The exit status that `error` stands for (the README's exit-code table)."""
    return _status_of_kind(type(error))
