"""What can go wrong with the server, told apart: which failures are worth retrying, and the
one-line errors for those that stop a run.

`classify` looks at an exception from the weaviate client (or a per-object error message) and
says what it was: the connection was lost (refused, reset, UNAVAILABLE), the server did not
answer in time, it failed (5xx), it refuses writes (disk full, read-only shards), the collection's
schema was changed by hand, or the request itself was refused (validation, wrong type, 4xx,
vector length). Only the first three are transient. The client is never imported here: types
are recognised by name, so this stays cheap and testable without a server.

`fault_point` is a test-only hook (see its docstring).
"""

from __future__ import annotations

import os
import re
import signal
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any, Literal

from stitcher.errors import StitcherError, setting
from stitcher.retry import RetryPolicy

FaultKind = Literal["connection", "timeout", "server", "read_only", "schema", "refused"]

#: Kinds that may go away by themselves; everything else is not retried.
TRANSIENT: frozenset[FaultKind] = frozenset({"connection", "timeout", "server"})


@dataclass(frozen=True)
class Fault:
    """What a failure was, and its first line (for messages)."""

    kind: FaultKind
    detail: str

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT


# Checked in this order on the message text: a read-only refusal arrives as a 5xx or a gRPC
# error too, and must not be retried as one.
_READ_ONLY_RE = re.compile(
    r"read[- ]?only|no space left|disk (?:usage|is full)|ENOSPC|out of disk", re.IGNORECASE
)
_SCHEMA_RE = re.compile(
    r"no such prop|invalid (?:\w+ )?property|property .* (?:not|does not) exist|"
    r"requires an? (?:int|integer|number|bool|boolean|string|text|date|uuid)|"
    r"(?:wrong|invalid|mismatched?) (?:data ?)?type|could not parse .* as",
    re.IGNORECASE,
)
_TIMEOUT_RE = re.compile(r"DEADLINE_EXCEEDED|timed? ?out|timeout", re.IGNORECASE)
_CONNECTION_RE = re.compile(
    r"UNAVAILABLE|connection (?:refused|reset|aborted|closed|lost|failed)|"
    r"connect(?:ion)? error|failed to connect|socket closed|broken pipe|"
    r"server disconnected|remote ?protocol|network is unreachable|"
    r"Connection to Weaviate failed",
    re.IGNORECASE,
)
_STATUS_RE = re.compile(r"\b(?:status code|code|HTTP)[: ]+(\d{3})\b", re.IGNORECASE)

_TIMEOUT_TYPES = {
    "WeaviateTimeoutError",
    "TimeoutException",
    "ReadTimeout",
    "ConnectTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "TimeoutError",
    "socket.timeout",
}
_CONNECTION_TYPES = {
    "WeaviateConnectionError",
    "WeaviateGRPCUnavailableError",
    "ConnectError",
    "RemoteProtocolError",
    "ReadError",
    "WriteError",
    "NetworkError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "BrokenPipeError",
    "WeaviateClosedClientError",
}


def classify(error: BaseException | str) -> Fault:
    """What kind of failure `error` is (an exception, or a per-object error message).

    The exception, its causes and its message are all looked at: the weaviate client wraps gRPC
    and HTTP errors in its own types, keeping the original as the cause or only in the text.
    """
    if isinstance(error, str):
        return _classify_text(error, status=None)
    names: set[str] = set()
    texts: list[str] = []
    status: int | None = None
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names.update(cls.__name__ for cls in type(current).__mro__)
        texts.append(str(current))
        code = getattr(current, "status_code", None)
        if isinstance(code, int) and status is None:
            status = code
        grpc_code = _grpc_code(current)
        if grpc_code:
            texts.append(grpc_code)
        current = current.__cause__ or current.__context__
    text = " | ".join(texts)
    detail = first_line(error)
    if _READ_ONLY_RE.search(text):
        return Fault("read_only", detail)
    if names & _TIMEOUT_TYPES:
        return Fault("timeout", detail)
    if names & _CONNECTION_TYPES:
        return Fault("connection", detail)
    return _classify_text(text, status=status, detail=detail)


def _classify_text(text: str, status: int | None, detail: str | None = None) -> Fault:
    detail = detail if detail is not None else first_line(text)
    if status is None:
        found = _STATUS_RE.search(text)
        status = int(found.group(1)) if found else None
    if _READ_ONLY_RE.search(text):
        return Fault("read_only", detail)
    if _SCHEMA_RE.search(text):
        return Fault("schema", detail)
    if status is not None and 400 <= status < 500:
        return Fault("timeout" if status in (408, 429) else "refused", detail)
    if _TIMEOUT_RE.search(text):
        return Fault("timeout", detail)
    if _CONNECTION_RE.search(text):
        return Fault("connection", detail)
    if status is not None and status >= 500:
        return Fault("server", detail)
    return Fault("refused", detail)


def _grpc_code(error: BaseException) -> str:
    code = getattr(error, "code", None)
    if not callable(code):
        return ""
    try:
        value = code()
    except Exception:
        return ""
    return str(getattr(value, "name", value) or "")


def leave_retrying_to_stitcher(weaviate_retry: ModuleType) -> None:
    """Make the weaviate client send each gRPC request once (`weaviate.retry._Retry`).

    The client retries gRPC UNAVAILABLE by itself, sleeping 1, 2, 4, 8 (and 16, 32) seconds: a
    search, a lease read or a batch write to a server that is gone took 15-63 s before it
    failed, and every layer above retried that again (one ingest gave up after 161 s, its
    README saying 20). With one attempt here, stitcher's RetryPolicy is the one budget. If a
    client version renames the class, nothing is changed (tests/test_lost_server.py measures
    the give-up time and fails).
    """
    retry = getattr(weaviate_retry, "_Retry", None)
    if retry is None or getattr(retry, "_stitcher_once", False):
        return

    def once(self: Any, count: int, error: str, f: Any, *args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs)

    async def once_async(
        self: Any, count: int, error: str, f: Any, *args: Any, **kwargs: Any
    ) -> Any:
        return await f(*args, **kwargs)

    retry.with_exponential_backoff = once
    retry.awith_exponential_backoff = once_async
    retry._stitcher_once = True


def past_a_dead_replica(policy: RetryPolicy) -> RetryPolicy:
    """`policy` for requests that take no consistency level (aggregations): one more attempt
    even after the time budget is spent.

    Weaviate sends an aggregation to one replica of each shard; right after a node dies it may
    pick that node's and wait out the whole query timeout (measured on 1.38: 60 s, once) while
    searches and fetches at QUORUM go on. By then gossip has marked the node dead, so one more
    attempt reaches a live replica.
    """
    return replace(policy, minimum_attempts=max(2, policy.minimum_attempts))


#: What each kind of fault means, in words a notice can carry after "could not ...".
_REASONS: dict[FaultKind, str] = {
    "connection": "the server cannot be reached",
    "timeout": "the server did not answer in time",
    "server": "the server failed",
    "read_only": "the server refuses writes",
    "schema": "a collection's schema was changed by hand",
    "refused": "the server refused the request",
}


def reason(error: BaseException) -> str:
    """Why `error` happened, in a few words and never the exception's text (which may be a
    multi-line gRPC dump): for warnings that must stay one readable line."""
    return _REASONS[classify(error).kind]


def is_transient(error: BaseException) -> bool:
    """Whether retrying may help (for stitcher.retry.call_with_retries)."""
    return classify(error).transient


def first_line(error: BaseException | str, limit: int = 160) -> str:
    """The first non-empty line of an error's text, shortened: messages stay one line."""
    text = str(error)
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return type(error).__name__ if isinstance(error, BaseException) else ""


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

_ERRORS: dict[FaultKind, type[ServerFault]] = {
    "connection": ServerLost,
    "timeout": ServerTimeout,
    "server": ServerFailed,
    "read_only": ServerRefusesWrites,
    "schema": SchemaChanged,
    "refused": RequestRefused,
}


def server_fault(fault: Fault, *, url: str, doing: str, collection: str) -> ServerFault:
    """The one-line error for a fault met while `doing` (e.g. "writing") on `collection`."""
    where = f"Weaviate at {url}"
    messages: dict[FaultKind, str] = {
        "connection": f"lost the connection to {where} while {doing}",
        "timeout": f"{where} did not answer in time while {doing}",
        "server": f"{where} failed while {doing} ({fault.detail})",
        "read_only": f"{where} refuses writes to {collection!r}: disk full or read-only "
        f"({fault.detail})",
        "schema": f"collection {collection!r} at {where} no longer has the schema stitcher made "
        f"({fault.detail})",
        "refused": f"{where} refused a request while {doing} ({fault.detail})",
    }
    return _ERRORS[fault.kind](messages[fault.kind], url=url, kind=fault.kind)


# --- test-only hook --------------------------------------------------------------------------

#: `phase:n[:action]`, e.g. `write:3` or `embed:1:stop`. Read once, at import.
FAULT_POINT_VARIABLE = "STITCHER_FAULT_POINT"
_PHASES = ("read", "embed", "write", "delete", "prune", "import")


def _parse_plan(value: str | None) -> tuple[str, int, str] | None:
    if not value:
        return None
    parts = value.split(":")
    if len(parts) not in (2, 3) or parts[0] not in _PHASES or not parts[1].isdigit():
        raise StitcherError(
            f"{FAULT_POINT_VARIABLE}={value!r}: expected phase:n[:kill|stop] with phase one of "
            f"{', '.join(_PHASES)}"
        )
    action = parts[2] if len(parts) == 3 else "kill"
    if action not in ("kill", "stop"):
        raise StitcherError(f"{FAULT_POINT_VARIABLE}={value!r}: action must be kill or stop")
    return parts[0], int(parts[1]), action


_PLAN = _parse_plan(os.environ.get(FAULT_POINT_VARIABLE))
_REACHED: dict[str, int] = {}


def fault_point(phase: str) -> None:
    """Test hook for the fault-injection suite (tests/test_faults.py); a no-op normally.

    With STITCHER_FAULT_POINT=phase:n the process sends itself SIGKILL the n-th time (from 1)
    ingest reaches `phase`: "read" (a document was read and split), "embed" (a group is about
    to be embedded), "write" (a group is about to be written), "delete" (an old version is
    about to be deleted), "prune" (a vanished document is about to be deleted), "import" (a
    batch of `stitcher import` is about to be written). With
    phase:n:stop it sends itself SIGSTOP instead, so a test can act (stop the server) and then
    let it continue with SIGCONT. Called a few times per group, never per chunk.
    """
    if _PLAN is None:
        return
    wanted_phase, wanted_count, action = _PLAN
    if phase != wanted_phase:
        return
    _REACHED[phase] = _REACHED.get(phase, 0) + 1
    if _REACHED[phase] == wanted_count:
        os.kill(os.getpid(), signal.SIGKILL if action == "kill" else signal.SIGSTOP)
