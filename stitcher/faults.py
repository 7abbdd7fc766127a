"""What can go wrong with the server, told apart: which failures are worth retrying, and the
one-line errors for those that stop a run.

`classify` looks at an exception (or a per-object error message of a batch reply) and says what
it was: the connection was lost (refused, reset, UNAVAILABLE), the server did not answer in time,
it failed (5xx), it refuses writes (disk full, read-only shards), the collection's schema was
changed by hand, or the request itself was refused (validation, wrong type, 4xx, vector
length). Only the first three are transient. Exceptions are told apart by type: Python's own
here, a client library's by the store that uses it, which hands its classifier in (`kind_of`:
stitcher.store.weaviate.faults for the weaviate client), so nothing here knows any client.

`fault_point` is a test-only hook (see its docstring).
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass, replace

# The errors live in stitcher.errors; imported here as they always were.
from stitcher.errors import (
    FaultKind,
    RequestRefused,
    SchemaChanged,
    ServerFailed,
    ServerFault,
    ServerLost,
    ServerRefusesWrites,
    ServerTimeout,
    StitcherError,
)
from stitcher.retry import RetryPolicy

#: Kinds that may go away by themselves; everything else is not retried.
TRANSIENT: frozenset[FaultKind] = frozenset({"connection", "timeout", "server"})

#: A library's classifier: the kind of one of its exceptions by type, None when it is not one
#: of its own or says nothing.
KindOf = Callable[[BaseException], FaultKind | None]


@dataclass(frozen=True)
class Fault:
    """What a failure was, and its first line (for messages)."""

    kind: FaultKind
    detail: str

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT


# What the server says in words only: a full disk or read-only shards, and a schema changed by
# hand, arrive as a 4xx/5xx or a gRPC error like any other, or as a per-object reason in a batch
# reply, and must not be retried as one. No exception type or status code tells them apart, so
# these look at the server's message, and nothing else does.
_READ_ONLY_RE = re.compile(
    r"read[- ]?only|no space left|disk (?:usage|is full)|ENOSPC|out of disk", re.IGNORECASE
)
_SCHEMA_RE = re.compile(
    r"no such prop|invalid (?:\w+ )?property|property .* (?:not|does not) exist|"
    r"requires an? (?:int|integer|number|bool|boolean|string|text|date|uuid)|"
    r"(?:wrong|invalid|mismatched?) (?:data ?)?type|could not parse .* as",
    re.IGNORECASE,
)

# A per-object reason in a batch reply (or a delete's) is the server's text and nothing else:
# no exception is raised for it, so only for those strings is whether it may pass read from
# words, as the server words them (a replica that timed out or could not be reached, a status
# code quoted).
_TIMEOUT_TEXT_RE = re.compile(r"DEADLINE_EXCEEDED|timed? ?out|timeout", re.IGNORECASE)
_CONNECTION_TEXT_RE = re.compile(
    r"UNAVAILABLE|connection (?:refused|reset|aborted|closed|lost|failed)|"
    r"connect(?:ion)? error|failed to connect|socket closed|broken pipe|"
    r"server disconnected|remote ?protocol|network is unreachable",
    re.IGNORECASE,
)
_STATUS_TEXT_RE = re.compile(r"\b(?:status code|code|HTTP)[: ]+(\d{3})\b", re.IGNORECASE)


def classify(error: BaseException | str, kind_of: KindOf | None = None) -> Fault:
    """What kind of failure `error` is: an exception, or a per-object reason from a batch reply.

    An exception is told apart by its type, along its causes and contexts (a client wraps a
    gRPC error in its own types, often only as the context): `kind_of`, the classifier of the
    library that raised it, names its own exceptions, then Python's ConnectionError and
    TimeoutError do. Only whether the server refuses writes or no longer has the schema is read
    from its message (it says so only in words).
    """
    if isinstance(error, str):
        return _classify_reason(error)
    detail = first_line(error)
    chain = _chain(error)
    said = " | ".join(_server_message(current) for current in chain)
    if _READ_ONLY_RE.search(said):
        return Fault("read_only", detail)
    if _SCHEMA_RE.search(said):
        return Fault("schema", detail)
    # The innermost cause that says first: the client wraps a 401 into a start-up error, an
    # UNAVAILABLE into a query error, and the cause is the more precise of the two.
    for current in reversed(chain):
        kind = _kind_of(current, kind_of)
        if kind is not None:
            return Fault(kind, detail)
    return Fault("refused", detail)


def _chain(error: BaseException) -> list[BaseException]:
    """`error`, then its causes (or contexts), each once."""
    found: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not seen for seen in found):
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _kind_of(error: BaseException, kind_of: KindOf | None) -> FaultKind | None:
    """The kind of one exception by its type; None when it does not say."""
    kind = kind_of(error) if kind_of is not None else None
    if kind is not None:
        return kind
    if isinstance(error, TimeoutError):  # socket.timeout too
        return "timeout"
    if isinstance(error, ConnectionError):  # refused, reset, aborted, broken pipe
        return "connection"
    return None


def http_status_kind(status: int) -> FaultKind:
    """What an HTTP status says about a failed request."""
    if status == 503:
        return "connection"  # unavailable: restarting, or behind a proxy with no backend
    if status in (408, 429, 504):
        return "timeout"
    if status >= 500:
        return "server"
    return "refused"


def _server_message(error: BaseException) -> str:
    """What the server said in `error`: a gRPC error's `details()`, else the error's text."""
    details = getattr(error, "details", None)
    if callable(details):
        try:
            return str(details() or "")
        except Exception:  # an RpcError that is not a call has no details
            pass
    return str(error)


def _classify_reason(text: str) -> Fault:
    """A per-object reason from a batch reply: the server's words are all there is."""
    detail = first_line(text)
    found = _STATUS_TEXT_RE.search(text)
    status = int(found.group(1)) if found else None
    if _READ_ONLY_RE.search(text):
        return Fault("read_only", detail)
    if _SCHEMA_RE.search(text):
        return Fault("schema", detail)
    if status is not None and status < 500:
        return Fault(http_status_kind(status), detail)
    if _TIMEOUT_TEXT_RE.search(text):
        return Fault("timeout", detail)
    if _CONNECTION_TEXT_RE.search(text):
        return Fault("connection", detail)
    if status is not None:
        return Fault("server", detail)
    return Fault("refused", detail)


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


def reason(error: BaseException, kind_of: KindOf | None = None) -> str:
    """Why `error` happened, in a few words and never the exception's text (which may be a
    multi-line gRPC dump): for warnings that must stay one readable line."""
    return _REASONS[classify(error, kind_of).kind]


def is_transient(error: BaseException, kind_of: KindOf | None = None) -> bool:
    """Whether retrying may help (for stitcher.retry.call_with_retries)."""
    return classify(error, kind_of).transient


def first_line(error: BaseException | str, limit: int = 160) -> str:
    """The first non-empty line of an error's text, shortened: messages stay one line."""
    text = str(error)
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return type(error).__name__ if isinstance(error, BaseException) else ""


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
