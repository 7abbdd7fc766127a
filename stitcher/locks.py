"""Writers of one collection never collide: a file lock per machine, leases in Weaviate across
them.

Two kinds of writer share a collection (or a tenant of it):

* `ingest` writes only the documents of its **sources** (the first segment of a document id:
  a folder's name, or `--source`), so it locks those sources and nothing else. Several hosts can
  load *different* sources into one collection at once; two runs that share a source exclude
  each other.
* `adopt`, `drop`, `export`, `import` and `entities load` touch the **whole collection** and
  exclude every other writer of it, ingests included.

Each writer holds, for each thing it locks:

* a **file lock** under $STITCHER_HOME/locks, keyed by the normalised server identity, the
  collection (and tenant, and source) (`http://H:8080/` and `http://h:8080` are one server):
  cheap, and it dies with its process, so writers on one machine never wait on a crashed one;
* a **lease**: an object in the `StitcherLease` collection of the server itself, its id derived
  from what it locks, holding host, pid, command, a random token, acquired_at and expires_at. It
  is renewed by a background thread while the command runs, deleted at the end, and taken over
  by another writer only after it expired (its holder crashed or lost the server).

Compare-and-set as far as Weaviate allows: a lease is only ever *created* with `data.insert`, which
the server refuses for an id that exists, so of two writers racing for the same free lease one
wins; the winner reads it back and checks its token. Taking over an expired lease re-reads it,
deletes it only if it still carries the expired token, and creates a new one (again create-only).
What remains: a writer that re-read the expired lease and then stalled could delete the fresh
lease of a writer that took over in that gap; both would then run.

The two kinds have different ids, so they exclude each other by *insert, then check*: a source
lease, once created, looks for a live whole-collection lease; a whole-collection lease, once
created, looks for live source leases of the collection. Either check runs after the writer's
own insert, so of two writers that overlap at least one sees the other; whoever sees a rival
deletes its own lease and gives way (or, with --wait, tries again a little later). Both may give
way at once; neither then writes anything.

A lease whose holder ran on this very machine and whose process is gone (killed, crashed) is
taken over at once, without waiting for its expiry. The renewal thread notices a lost lease and
warns. Expiry compares clocks of different machines: keep them in NTP sync (the lease lasts
minutes, so a few seconds of skew do not matter).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import random
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil

from stitcher.bookkeeping import bookkeeping_uuid
from stitcher.config import ConnectionSettings, stitcher_home
from stitcher.errors import LockHeld, setting
from stitcher.faults import is_transient, reason
from stitcher.retry import call_with_retries
from stitcher.store.base import LeaseBoard

#: How long a lease lasts without renewal; the holder renews it every third of that.
LEASE_SECONDS = 120.0

#: How often a writer with --wait looks at the lease again.
WAIT_POLL_SECONDS = 2.0

_DEFAULT_PORTS = {"http": 80, "https": 443}

Notice = Callable[[str], None]


def server_identity(connection: ConnectionSettings) -> str:
    """One spelling per server: lower-case scheme and host, explicit port, no trailing "/".

    The local server (no URL) is identified by its data directory.
    """
    if not connection.url:
        return f"local:{stitcher_home().expanduser().resolve()}"
    url = connection.url.strip()
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = parts.port or _DEFAULT_PORTS.get(scheme, 80)
    path = parts.path.rstrip("/")
    return f"{scheme}://{host}:{port}{path}"


def lock_key(
    connection: ConnectionSettings,
    collection: str,
    tenant: str | None = None,
    source: str | None = None,
) -> str:
    """Short stable key of (server, collection[, tenant][, source]): names the local lock file
    and (without a source) the load memo. Tenants of one collection are locked apart, and so
    are the sources of one collection or tenant."""
    text = f"{server_identity(connection)}\x00{collection}"
    if tenant is not None:
        text += f"\x00tenant\x00{tenant}"
    if source is not None:
        text += f"\x00source\x00{source}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def scope_of(collection: str, tenant: str | None = None, source: str | None = None) -> str:
    """ "'Docs'", "tenant 'kb1' of 'Docs'", "source 'faq' of 'Docs'": what a lock holds, in
    messages."""
    scope = repr(collection) if tenant is None else f"tenant {tenant!r} of {collection!r}"
    return scope if source is None else f"source {source!r} of {scope}"


@contextmanager
def local_lock(
    connection: ConnectionSettings,
    collection: str,
    *,
    wait: bool,
    command: str,
    tenant: str | None = None,
    source: str | None = None,
) -> Iterator[None]:
    """The machine-wide file lock of one collection (or tenant, or source of either) on one
    server; LockHeld when taken."""
    # filelock pulls in asyncio (~60 ms)
    from filelock import FileLock, Timeout

    key = lock_key(connection, collection, tenant, source)
    path = stitcher_home() / "locks" / f"writer-{key}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    holder_file = path.with_suffix(".holder")
    lock = FileLock(str(path), timeout=-1 if wait else 0)
    try:
        lock.acquire()
    except Timeout:
        writer = (
            "another ingest (or adopt, drop, entities load) into"
            if source is None
            else "another ingest of"
        )
        raise LockHeld(
            f"{writer} {scope_of(collection, tenant, source)} is running on this machine "
            f"({_read_holder(holder_file)}); wait for it, or use {setting('wait', True)} to "
            "queue behind it"
        ) from None
    try:
        holder_file.write_text(
            f"`stitcher {command}` on {socket.gethostname()}, pid {os.getpid()}", "utf-8"
        )
        yield
    finally:
        lock.release()


def _read_holder(path: Path) -> str:
    try:
        return path.read_text("utf-8").strip() or "holder unknown"
    except OSError:
        return "holder unknown"


@dataclass(frozen=True)
class LeaseInfo:
    """A lease as stored: who holds it, what it locks and until when."""

    host: str
    pid: int
    command: str
    token: str
    acquired_at: dt.datetime
    expires_at: dt.datetime
    collection: str = ""
    tenant: str | None = None
    #: The source an ingest locks; None for a whole-collection lease.
    source: str | None = None

    def describe(self) -> str:
        """ "`stitcher ingest` on host web1 (pid 4242) until 2026-12-03 14:10:00 UTC"."""
        until = self.expires_at.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        return f"`stitcher {self.command}` on host {self.host} (pid {self.pid}) until {until} UTC"

    def scope(self) -> str:
        """What the lease locks, in messages (see `scope_of`)."""
        return scope_of(self.collection, self.tenant, self.source)

    def live(self) -> bool:
        """Whether its holder may still be writing: not expired, and not a process of this
        machine that is gone."""
        return self.expires_at > _now() and not _dead_here(self)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> LeaseInfo:
        """A lease from its stored values (records of older versions lack tenant and source)."""
        return cls(
            host=str(record.get("host") or "?"),
            pid=int(record.get("pid") or 0),
            command=str(record.get("command") or "?"),
            token=str(record.get("token") or ""),
            acquired_at=_as_datetime(record.get("acquired_at")),
            expires_at=_as_datetime(record.get("expires_at")),
            collection=str(record.get("collection") or ""),
            tenant=str(record["tenant"]) if record.get("tenant") else None,
            source=str(record["source"]) if record.get("source") else None,
        )


#: Finds a live lease of the other kind (see the module docstring), or None.
RivalCheck = Callable[[], "LeaseInfo | None"]


class Lease:
    """One lease stored on the server: of a whole collection (or tenant of it), or of one source
    of it (see the module docstring). `collection_lease` and `source_leases` make them with the
    check against the other kind.

    Args:
        board: Where the server keeps leases (`ChunkStore.leases()`).
        collection: The locked collection (canonical name).
        command: What the holder runs, shown to writers that are refused.
        seconds: Lifetime without renewal.
        notice: Called with one-line notices (a lease taken over, a lease lost).
        tenant: The locked tenant of a multi-tenant collection: its own lease, so writers of
            different tenants never wait for each other.
        source: The locked source; None locks the whole collection (or tenant).
        rival: Called once the lease is ours: a live lease of the other kind, which makes this
            one give way; None checks nothing.
    """

    def __init__(
        self,
        board: LeaseBoard,
        collection: str,
        *,
        command: str,
        seconds: float = LEASE_SECONDS,
        notice: Notice | None = None,
        tenant: str | None = None,
        source: str | None = None,
        rival: RivalCheck | None = None,
    ) -> None:
        self._board = board
        self._collection = collection
        self._tenant = tenant
        self._source = source
        self._scope = scope_of(collection, tenant, source)
        self._command = command
        self._seconds = seconds
        self._notice: Notice = notice or (lambda message: None)
        self._rival = rival
        self._token = secrets.token_hex(16)
        self.object_id = lease_id(collection, tenant, source)
        self.lost_to: LeaseInfo | None = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def _transient(self, error: BaseException) -> bool:
        """Whether an error of the board may pass (told apart by the board's own classifier)."""
        return is_transient(error, self._board.fault_kind)

    @contextmanager
    def held(self, *, wait: bool) -> Iterator[None]:
        """Hold the lease for the block: acquire, renew in the background, release."""
        self.acquire(wait=wait)
        self._renewer = threading.Thread(
            target=self._renew_until_stopped, name="stitcher-lease", daemon=True
        )
        self._renewer.start()
        try:
            yield
        finally:
            self._stop.set()
            self._renewer.join()
            self._release_or_warn()

    def _release_or_warn(self) -> None:
        """Release; a failure only warns. The server may be gone (then the error that ended the
        block says so, and must not be replaced by this one), and a lease left behind expires —
        at once for the next writer on this machine, whose holder process is then gone."""
        try:
            self.release()
        except Exception as error:
            self._notice(
                f"warning: could not release the lease on {self._scope} "
                f"({reason(error, self._board.fault_kind)}); it expires by itself"
            )

    def acquire(self, *, wait: bool) -> None:
        """Take the lease; LockHeld (or, with `wait`, wait) while another holder's is valid,
        of this lease or of the other kind.

        A failure that may pass is retried with stitcher's policy, as any request is (the
        client itself sends each request once: stitcher.store.weaviate.connection's
        leave_retrying_to_stitcher). Renewing and releasing are tried once: the next renewal
        tries again, and a lease left behind expires.
        """
        call_with_retries(self._board.ensure, is_transient=self._transient)
        while True:
            if not call_with_retries(lambda: self._take(wait=wait), is_transient=self._transient):
                continue
            rival = (
                call_with_retries(self._rival, is_transient=self._transient)
                if self._rival is not None
                else None
            )
            if rival is None:
                return
            # Insert, then check: the rival may have checked before our insert and be writing
            # now, so we are the one to give way.
            self.release()
            if not wait:
                raise _held_by(rival)
            # Two writers that gave way to each other try again at different moments.
            time.sleep(WAIT_POLL_SECONDS * (0.5 + random.random()))

    def _take(self, *, wait: bool) -> bool:
        """One attempt at the lease itself: True when it is ours; False to look again (a race
        lost, or a wait done); LockHeld while another's is valid and `wait` is off."""
        current = self.read()
        if current is None:
            return self._create() and self._confirmed()
        if current.token == self._token:
            return True
        if not current.live():
            self._notice(f"taking over the lease of a writer gone: {current.describe()}")
            return self._remove_if(current.token) and self._create() and self._confirmed()
        if not wait:
            raise _held_by(current, self._scope)
        time.sleep(WAIT_POLL_SECONDS)
        return False

    def renew(self) -> bool:
        """Extend the lease; False (and `lost_to` set) when another writer holds it now."""
        current = self.read()
        if current is None or current.token != self._token:
            if self.lost_to is None and current is not None:
                self.lost_to = current
                self._notice(
                    f"warning: the lease on {self._scope} was taken over by "
                    f"{current.describe()}; another writer may have run at the same time"
                )
            return False
        self._board.update(self.object_id, {"expires_at": _now() + self._interval()})
        return True

    def release(self) -> None:
        """Delete the lease if it is still ours."""
        current = self.read()
        if current is not None and current.token == self._token:
            self._board.delete(self.object_id)

    def read(self) -> LeaseInfo | None:
        """The stored lease, or None."""
        record = self._board.read(self.object_id)
        return None if record is None else LeaseInfo.from_record(record)

    def _interval(self) -> dt.timedelta:
        return dt.timedelta(seconds=self._seconds)

    def _renew_until_stopped(self) -> None:
        failing = False
        while not self._stop.wait(self._seconds / 3):
            try:
                self.renew()
                failing = False
            except Exception as error:  # the server may be briefly away; the next try may work
                # One line per outage, not per attempt: a lost server also ends the run with
                # its own error line, which this warning must not bury.
                if not failing:
                    self._notice(
                        f"warning: could not renew the lease on {self._scope} "
                        f"({reason(error, self._board.fault_kind)}); trying again"
                    )
                failing = True

    def _create(self) -> bool:
        """Create the lease object; False when one exists already (another writer was first)."""
        now = _now()
        return self._board.create(
            self.object_id,
            {
                "collection": self._collection,
                "tenant": self._tenant or "",
                "source": self._source or "",
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "command": self._command,
                "token": self._token,
                "acquired_at": now,
                "expires_at": now + self._interval(),
            },
        )

    def _remove_if(self, token: str) -> bool:
        """Delete the lease only if it still carries `token` (narrows the takeover race)."""
        current = self.read()
        if current is None:
            return True
        if current.token != token:
            return False
        self._board.delete(self.object_id)
        return True

    def _confirmed(self) -> bool:
        current = self.read()
        return current is not None and current.token == self._token


def lease_id(collection: str, tenant: str | None = None, source: str | None = None) -> str:
    """The id of the lease on a collection, a tenant of it, or a source of either."""
    parts = ["lease", collection]
    if tenant is not None:
        parts += ["tenant", tenant]
    if source is not None:
        parts += ["source", source]
    return bookkeeping_uuid(*parts)


def collection_lease(
    board: LeaseBoard,
    collection: str,
    *,
    command: str,
    notice: Notice | None = None,
    tenant: str | None = None,
    seconds: float = LEASE_SECONDS,
) -> Lease:
    """The lease of a whole collection (or tenant): it gives way to live source leases."""

    def live_source_lease() -> LeaseInfo | None:
        for record in board.records_of(collection):
            lease = LeaseInfo.from_record(record)
            if lease.source is not None and lease.tenant == tenant and lease.live():
                return lease
        return None

    return Lease(
        board,
        collection,
        command=command,
        notice=notice,
        tenant=tenant,
        seconds=seconds,
        rival=live_source_lease,
    )


def source_leases(
    board: LeaseBoard,
    collection: str,
    sources: Sequence[str],
    *,
    command: str,
    notice: Notice | None = None,
    tenant: str | None = None,
    seconds: float = LEASE_SECONDS,
) -> list[Lease]:
    """The leases of some sources of a collection (or tenant), in the order to take them (sorted:
    two runs waiting for each other's sources would otherwise deadlock); each gives way to a live
    whole-collection lease."""
    whole = Lease(board, collection, command=command, tenant=tenant)

    def live_collection_lease() -> LeaseInfo | None:
        lease = whole.read()
        return lease if lease is not None and lease.live() else None

    return [
        Lease(
            board,
            collection,
            command=command,
            notice=notice,
            tenant=tenant,
            source=source,
            seconds=seconds,
            rival=live_collection_lease,
        )
        for source in sorted(set(sources))
    ]


@contextmanager
def all_held(leases: Sequence[Lease], *, wait: bool) -> Iterator[None]:
    """Hold every lease for the block, taken in the given order, released in reverse."""
    with ExitStack() as stack:
        for lease in leases:
            stack.enter_context(lease.held(wait=wait))
        yield


def _held_by(lease: LeaseInfo, scope: str | None = None) -> LockHeld:
    return LockHeld(
        f"{_subject(scope or lease.scope())} is locked by {lease.describe()}; wait for it, or "
        f"use {setting('wait', True)} to queue behind it"
    )


def _subject(scope: str) -> str:
    # "collection 'Docs'" as it always read; "tenant 'kb1' of 'Docs'", "source 'faq' of 'Docs'"
    # (messages start in lower case after the CLI's "error: ").
    return f"collection {scope}" if scope.startswith("'") else scope


def _dead_here(lease: LeaseInfo) -> bool:
    """Whether the holder ran on this machine and its process is gone (killed, crashed): then
    there is no need to wait for the lease to expire."""
    if lease.host != socket.gethostname() or lease.pid <= 0 or lease.pid == os.getpid():
        return False
    return not psutil.pid_exists(lease.pid)  # a pid of another user's process exists too


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _as_datetime(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return dt.datetime.fromtimestamp(0, dt.timezone.utc)
