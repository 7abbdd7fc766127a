"""Every writer (ingest, adopt, drop, entities load) holds a file lock keyed by the normalised
server and collection, and a lease stored in Weaviate that another host takes over only after
it expired."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stitcher.bookkeeping import LEASE_COLLECTION, bookkeeping_uuid
from stitcher.config import ConnectionSettings
from stitcher.errors import ExitStatus, LockHeld
from stitcher.locks import (
    Lease,
    all_held,
    collection_lease,
    lease_id,
    local_lock,
    server_identity,
    source_leases,
)
from stitcher.store.memory import MemoryServer, MemoryStore
from stitcher.store.weaviate.leases import WeaviateLeases
from tests.test_faults import _wait_until_stopped
from tests.test_sources import ROOT, STITCHER, TEXT, cli, make_root


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("http://h:8080", "http://h:8080/"),
        ("http://h:8080", "HTTP://H:8080"),
        ("http://h", "http://h:80/"),
        ("https://cluster.example.com", "https://Cluster.example.com:443"),
        ("h:8080", "http://h:8080"),
    ],
)
def test_spellings_of_one_server_are_one_identity(one: str, other: str) -> None:
    assert server_identity(ConnectionSettings(url=one)) == server_identity(
        ConnectionSettings(url=other)
    )


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("http://h:8080", "http://h:8081"),
        ("http://h:8080", "https://h:8080"),
        ("http://a", "http://b"),
    ],
)
def test_other_servers_are_other_identities(one: str, other: str) -> None:
    assert server_identity(ConnectionSettings(url=one)) != server_identity(
        ConnectionSettings(url=other)
    )


def test_url_with_and_without_slash_share_the_file_lock() -> None:
    from stitcher.api import Stitcher

    holder = Stitcher("http://127.0.0.1:8080/", collection="Locked")
    other = Stitcher("http://127.0.0.1:8080", collection="locked")

    def lock(session: Stitcher) -> Any:
        return local_lock(session.connection, session.collection, wait=False, command="drop")

    with lock(holder), pytest.raises(LockHeld) as refused:
        lock(other).__enter__()
    assert f"pid {os.getpid()}" in str(refused.value) and "wait=True" in str(refused.value)


def test_leases_on_one_in_memory_server_exclude_each_other_per_collection() -> None:
    server = MemoryServer()
    first = Lease(MemoryStore("docs", server).leases(), "Docs", command="ingest")
    first.acquire(wait=False)
    with pytest.raises(LockHeld) as refused:
        Lease(MemoryStore("docs", server).leases(), "Docs", command="drop").acquire(wait=False)
    assert "ingest" in str(refused.value) and f"pid {os.getpid()}" in str(refused.value)
    Lease(MemoryStore("other", server).leases(), "Other", command="ingest").acquire(wait=False)
    Lease(MemoryStore("docs").leases(), "Docs", command="drop").acquire(wait=False)  # own server
    first.release()
    second = Lease(MemoryStore("docs", server).leases(), "Docs", command="drop")
    second.acquire(wait=False)
    held = second.read()
    assert held is not None and held.command == "drop"


def test_an_expired_lease_on_the_in_memory_store_is_taken_over() -> None:
    board = MemoryStore("docs").leases()
    stale = Lease(board, "Docs", command="ingest")
    now = dt.datetime.now(dt.timezone.utc)
    planted = {"host": "other-host", "pid": 4242, "command": "ingest", "token": "old"}
    board.create(stale.object_id, {**planted, "acquired_at": now, "expires_at": now})
    notices: list[str] = []
    Lease(board, "Docs", command="drop", notice=notices.append).acquire(wait=False)
    held = stale.read()
    assert held is not None and held.command == "drop" and held.token != "old"
    assert any("taking over" in notice for notice in notices)


class _Hiccup(Exception):
    """An error only the flaky board below knows as a lost connection."""


class FlakyBoard:
    """An in-memory board whose first reads fail with its own error type: whether the lease
    retries them is the board's classifier's answer (`fault_kind`), not the error's text."""

    def __init__(self, failures: int, kind: str | None) -> None:
        self._inner = MemoryStore("docs").leases()
        self.failures = failures
        self.kind = kind

    def read(self, lease_id: str) -> dict[str, Any] | None:
        if self.failures:
            self.failures -= 1
            raise _Hiccup("hiccup")
        return self._inner.read(lease_id)

    def fault_kind(self, error: BaseException) -> Any:
        return self.kind if isinstance(error, _Hiccup) else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_lease_retries_what_its_board_calls_transient_and_nothing_else() -> None:
    passing = FlakyBoard(failures=1, kind="connection")
    Lease(passing, "Docs", command="ingest").acquire(wait=False)
    assert passing.failures == 0 and passing.read(lease_id("Docs")) is not None
    for kind in ("refused", None):  # told so by the board, or an error it does not know
        refusing = FlakyBoard(failures=1, kind=kind)
        with pytest.raises(_Hiccup):
            Lease(refusing, "Docs", command="ingest").acquire(wait=False)
        assert refusing.read(lease_id("Docs")) is None  # nothing taken


def test_a_lease_warns_in_the_boards_words_when_it_cannot_release() -> None:
    board = FlakyBoard(failures=0, kind="timeout")
    notices: list[str] = []
    lease = Lease(board, "Docs", command="ingest", notice=notices.append)
    with lease.held(wait=False):
        board.failures = 1  # the release's read fails
    assert notices == [
        "warning: could not release the lease on 'Docs' (the server did not answer in time); "
        "it expires by itself"
    ]


def test_ingests_of_different_sources_hold_leases_at_once_and_a_shared_source_is_refused() -> None:
    board = MemoryStore("docs").leases()
    faq = source_leases(board, "Docs", ["faq"], command="ingest")
    with all_held(faq, wait=False):
        with all_held(source_leases(board, "Docs", ["guide"], command="ingest"), wait=False):
            assert board.read(lease_id("Docs", source="guide")) is not None
        with (
            pytest.raises(LockHeld) as refused,
            all_held(source_leases(board, "Docs", ["faq", "alpha"], command="ingest"), wait=False),
        ):
            pass
        assert "source 'faq' of 'Docs' is locked by `stitcher ingest`" in str(refused.value)
        # "alpha" was taken first (sorted) and given back when "faq" was refused
        assert board.read(lease_id("Docs", source="alpha")) is None
    assert board.read(lease_id("Docs", source="faq")) is None


def test_whole_collection_writers_and_source_ingests_exclude_each_other() -> None:
    board = MemoryStore("docs").leases()
    [faq] = source_leases(board, "Docs", ["faq"], command="ingest")
    with faq.held(wait=False):
        with pytest.raises(
            LockHeld, match=r"source 'faq' of 'Docs' is locked by `stitcher ingest`"
        ):
            collection_lease(board, "Docs", command="drop").acquire(wait=False)
        assert board.read(lease_id("Docs")) is None  # the refused writer left nothing behind
        # another tenant's collection lease is not this source's business
        collection_lease(board, "Docs", command="drop", tenant="kb2").acquire(wait=False)
    drop = collection_lease(board, "Docs", command="drop")
    with drop.held(wait=False):
        with pytest.raises(LockHeld, match=r"collection 'Docs' is locked by `stitcher drop`"):
            source_leases(board, "Docs", ["guide"], command="ingest")[0].acquire(wait=False)
        assert board.read(lease_id("Docs", source="guide")) is None


def test_an_expired_source_lease_does_not_hold_back_a_whole_collection_writer() -> None:
    board = MemoryStore("docs").leases()
    now = dt.datetime.now(dt.timezone.utc)
    board.create(
        lease_id("Docs", source="faq"),
        {
            "collection": "Docs",
            "tenant": "",
            "source": "faq",
            "host": "gone",
            "pid": 1,
            "command": "ingest",
            "token": "old",
            "acquired_at": now,
            "expires_at": now,
        },
    )
    drop = collection_lease(board, "Docs", command="drop")
    drop.acquire(wait=False)
    held = drop.read()
    assert held is not None and held.command == "drop"


def test_a_waiting_whole_collection_writer_runs_once_the_source_ingest_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import stitcher.locks

    monkeypatch.setattr(stitcher.locks, "WAIT_POLL_SECONDS", 0.02)
    board = MemoryStore("docs").leases()
    [faq] = source_leases(board, "Docs", ["faq"], command="ingest")
    faq.acquire(wait=False)
    drop = collection_lease(board, "Docs", command="drop")
    waiter = threading.Thread(target=drop.acquire, kwargs={"wait": True})
    waiter.start()
    time.sleep(0.3)
    assert waiter.is_alive()  # still waiting: the source is being written
    faq.release()
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    held = drop.read()
    assert held is not None and held.command == "drop"


@pytest.fixture
def collection(weaviate_client: Any) -> Iterator[str]:
    name = "Lock" + uuid.uuid4().hex[:12]
    yield name
    from stitcher.store.weaviate import WeaviateStore

    WeaviateStore(weaviate_client, name).forget_sources()
    weaviate_client.collections.delete(name)
    if weaviate_client.collections.exists(LEASE_COLLECTION):
        WeaviateLeases(weaviate_client).delete(bookkeeping_uuid("lease", name))


def plant_lease(
    client: Any, collection: str, *, host: str, expires_in: float, pid: int = 4242
) -> None:
    """A lease as another machine's writer would have left it."""
    lease = Lease(WeaviateLeases(client), collection, command="ingest")
    WeaviateLeases(client).ensure()
    now = dt.datetime.now(dt.timezone.utc)
    client.collections.use(LEASE_COLLECTION).data.insert(
        uuid=lease.object_id,
        properties={
            "collection": collection,
            "host": host,
            "pid": pid,
            "command": "ingest",
            "token": "theirs",
            "acquired_at": now - dt.timedelta(hours=1),
            "expires_at": now + dt.timedelta(seconds=expires_in),
        },
    )


def test_a_second_lease_is_refused_naming_the_holder(weaviate_client: Any, collection: str) -> None:
    first = Lease(WeaviateLeases(weaviate_client), collection, command="ingest")
    with first.held(wait=False):
        stored = first.read()
        assert stored is not None and stored.pid == os.getpid()
        with pytest.raises(LockHeld) as refused:
            Lease(WeaviateLeases(weaviate_client), collection, command="drop").acquire(wait=False)
        message = str(refused.value)
        assert f"pid {os.getpid()}" in message and "`stitcher ingest`" in message
        assert "until" in message and "wait=True" in message  # the CLI says --wait
    assert first.read() is None  # released


def test_a_live_lease_of_another_host_refuses_every_writer(
    weaviate_client: Any, weaviate_server: Any, collection: str, tmp_path: Path
) -> None:
    from stitcher.api import Stitcher

    plant_lease(weaviate_client, collection, host="other-host", expires_in=600)
    url, key = weaviate_server.url, weaviate_server.api_key()
    with Stitcher(url, key, collection, grpc_port=weaviate_server.grpc_port) as s:
        for attempt in (
            lambda: s.ingest([str(make_root(tmp_path, "a"))]),
            lambda: s.drop(),
            lambda: s.adopt(),
            lambda: s.load_entities([]),
        ):
            with pytest.raises(LockHeld, match=r"other-host \(pid 4242\)"):
                attempt()
    assert not weaviate_client.collections.exists(collection)


def test_an_expired_lease_of_a_dead_host_is_taken_over(
    weaviate_client: Any, weaviate_server: Any, collection: str, tmp_path: Path
) -> None:
    from stitcher.api import Stitcher

    plant_lease(weaviate_client, collection, host="dead-host", expires_in=-60)
    notices: list[str] = []
    url, key = weaviate_server.url, weaviate_server.api_key()
    with Stitcher(
        url, key, collection, grpc_port=weaviate_server.grpc_port, notice=notices.append
    ) as s:
        s.drop()  # takes the lease over, then releases it
    assert any("lease of a writer gone" in n and "dead-host" in n for n in notices)
    assert Lease(WeaviateLeases(weaviate_client), collection, command="x").read() is None


def test_the_lease_exists_while_ingest_runs_and_is_gone_after(
    weaviate_client: Any, weaviate_server: Any, collection: str, tmp_path: Path
) -> None:
    from stitcher.api import Stitcher
    from stitcher.ingest import SilentProgress

    seen: list[Any] = []

    board = WeaviateLeases(weaviate_client)
    of_source = Lease(board, collection, command="x", source="docs")
    whole = Lease(board, collection, command="x")

    class Watch(SilentProgress):
        def file_done(self, source: str) -> None:
            seen.append((of_source.read(), whole.read()))

    url, key = weaviate_server.url, weaviate_server.api_key()
    with Stitcher(url, key, collection, grpc_port=weaviate_server.grpc_port) as s:
        s.ingest([str(make_root(tmp_path, "a"))], progress=Watch())  # the source "docs"
    assert seen and all(
        lease is not None and lease.pid == os.getpid() and lease.source == "docs"
        for lease, _ in seen
    )
    assert all(other is None for _, other in seen)  # the ingest locks its source, not all
    assert of_source.read() is None and whole.read() is None


def test_renewal_extends_the_lease(weaviate_client: Any, collection: str) -> None:
    lease = Lease(WeaviateLeases(weaviate_client), collection, command="ingest", seconds=60)
    lease.acquire(wait=False)
    try:
        before = lease.read()
        assert before is not None
        lease._seconds = 3600
        assert lease.renew()
        after = lease.read()
        assert after is not None and after.expires_at > before.expires_at
    finally:
        lease.release()


def _folder(base: Path, name: str) -> Path:
    """A source folder `<base>/<name>` of a few documents that name it."""
    root = base / name
    root.mkdir(parents=True)
    for doc in ("one", "two"):
        (root / f"{doc}.txt").write_text(f"{name} {doc}. " + TEXT * 4, encoding="utf-8")
    return root


def _chunks(client: Any, name: str) -> dict[tuple[str, int], tuple[Any, ...]]:
    """Every chunk of a collection by (doc_id, chunk_index), with its parent as the same key:
    comparable across collections whatever their ids."""
    objects = list(client.collections.use(name).iterator())
    key_of = {
        str(o.uuid): (o.properties["doc_id"], int(o.properties["chunk_index"])) for o in objects
    }
    found = {}
    for o in objects:
        p = o.properties
        parent = key_of[str(p["parent_id"])] if p["parent_id"] else None
        found[key_of[str(o.uuid)]] = (p["text"], p["start"], p["end"], p["doc_hash"], parent)
    assert len(found) == len(objects)
    return found


def test_ingests_of_other_sources_run_alongside_and_write_what_one_run_writes(
    weaviate_client: Any, collection: str, tmp_path: Path
) -> None:
    """An ingest of `faq` stops itself (SIGSTOP) after reading its first document, holding the
    lease on its source. Meanwhile another ingest of `faq` and every whole-collection writer are
    refused, naming it; an ingest of `guide` runs, and creates the collection the stopped run
    was about to create. Resumed, that run joins the collection, and the two leave exactly what
    one ingest of both folders leaves."""
    faq, guide = _folder(tmp_path, "faq"), _folder(tmp_path, "guide")
    (tmp_path / "none.jsonl").write_text("", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STITCHER_FAULT_POINT": "read:1:stop"}
    first = subprocess.Popen(
        [str(STITCHER), "ingest", str(faq), "--collection", collection],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    reference = collection + "Ref"
    try:
        _wait_until_stopped(first)
        held = Lease(WeaviateLeases(weaviate_client), collection, command="x", source="faq")
        holder = held.read()
        assert holder is not None and holder.pid == first.pid and holder.source == "faq"

        again = cli("ingest", str(faq), "--collection", collection)
        assert again.returncode == ExitStatus.BUSY, again.stderr
        # refused by the file lock (this machine), before the lease is asked
        assert f"another ingest of source 'faq' of '{collection}'" in again.stderr
        assert f"pid {first.pid}" in again.stderr and "--wait" in again.stderr
        for args in (
            ("drop", "--collection", collection, "--yes"),
            ("adopt", "--collection", collection),
            ("entities", "load", str(tmp_path / "none.jsonl"), "--collection", collection),
        ):
            refused = cli(*args)
            assert refused.returncode == ExitStatus.BUSY, (args, refused.stderr)
            assert f"pid {first.pid}" in refused.stderr and "source 'faq'" in refused.stderr

        other = cli("ingest", str(guide), "--collection", collection)
        assert other.returncode == 0, other.stderr
        assert weaviate_client.collections.exists(collection)
    finally:
        first.send_signal(signal.SIGCONT)
        _out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    assert held.read() is None  # released
    try:
        alone = cli("ingest", str(faq), str(guide), "--collection", reference)
        assert alone.returncode == 0, alone.stderr
        together = _chunks(weaviate_client, collection)
        assert {doc for doc, _ in together} == {
            "faq/one.txt",
            "faq/two.txt",
            "guide/one.txt",
            "guide/two.txt",
        }
        assert together == _chunks(weaviate_client, reference)
    finally:
        cli("drop", "--collection", reference, "--yes")


def _plant_ingest_lease(board: WeaviateLeases, collection: str, tenant: str | None) -> str:
    """A live lease on source `faq` (of `tenant`), as another host's running ingest holds it;
    returns its id."""
    board.ensure()
    now = dt.datetime.now(dt.timezone.utc)
    planted = lease_id(collection, tenant=tenant, source="faq")
    board.create(
        planted,
        {
            "collection": collection,
            "tenant": tenant or "",
            "source": "faq",
            "host": "other-host",
            "pid": 4242,
            "command": "ingest",
            "token": "theirs",
            "acquired_at": now,
            "expires_at": now + dt.timedelta(minutes=10),
        },
    )
    return planted


def test_a_source_lease_of_another_host_refuses_that_source_and_whole_collection_writers(
    weaviate_client: Any, collection: str, tmp_path: Path
) -> None:
    board = WeaviateLeases(weaviate_client)
    _plant_ingest_lease(board, collection, None)
    try:
        refused = cli("ingest", str(_folder(tmp_path, "faq")), "--collection", collection)
        assert refused.returncode == ExitStatus.BUSY, refused.stderr
        assert f"source 'faq' of '{collection}' is locked by `stitcher ingest` on host " in (
            refused.stderr
        )
        assert "other-host (pid 4242)" in refused.stderr
        dropped = cli("drop", "--collection", collection, "--yes")
        assert dropped.returncode == ExitStatus.BUSY, dropped.stderr
        assert "source 'faq'" in dropped.stderr and "other-host" in dropped.stderr
        assert board.read(lease_id(collection)) is None  # the refused drop left no lease
    finally:
        board.delete(lease_id(collection, source="faq"))


def test_writers_of_every_tenant_give_way_to_any_tenants_ingest(
    weaviate_client: Any, collection: str, tmp_path: Path
) -> None:
    """`entities load` and `drop --all-tenants` of a multi-tenant collection write every tenant:
    a live ingest lease on one tenant's source (another host's) refuses them, naming it, while
    the same writers bound to another tenant go ahead."""
    for tenant in ("kb-a", "kb-b"):
        done = cli("ingest", str(_folder(tmp_path / tenant, "faq")), "-c", collection,
                   "--tenant", tenant)  # fmt: skip
        assert done.returncode == 0, done.stderr
    (tmp_path / "none.jsonl").write_text("", encoding="utf-8")
    board = WeaviateLeases(weaviate_client)
    planted = _plant_ingest_lease(board, collection, "kb-b")
    try:
        for args in (
            ("entities", "load", str(tmp_path / "none.jsonl"), "-c", collection),
            ("drop", "-c", collection, "--all-tenants", "--yes"),
        ):
            refused = cli(*args)
            assert refused.returncode == ExitStatus.BUSY, (args, refused.stderr)
            assert "source 'faq' of tenant 'kb-b'" in refused.stderr, refused.stderr
            assert "other-host (pid 4242)" in refused.stderr
            assert board.read(lease_id(collection)) is None  # nothing left held
            assert board.read(lease_id(collection, tenant="kb-a")) is None
        alone = cli("entities", "load", str(tmp_path / "none.jsonl"), "-c", collection,
                    "--tenant", "kb-a")  # fmt: skip
        assert alone.returncode == 0, alone.stderr
        assert weaviate_client.collections.use(collection).tenants.exists("kb-b")
    finally:
        board.delete(planted)
    dropped = cli("drop", "-c", collection, "--all-tenants", "--yes")
    assert dropped.returncode == 0, dropped.stderr
    assert not weaviate_client.collections.exists(collection)


def test_a_lease_collection_of_an_older_version_gains_tenant_and_source(
    weaviate_client: Any, collection: str
) -> None:
    """A server whose lease collection was made before per-source leases: `ensure` adds the
    properties, and a source lease then works on it."""
    from stitcher.store.weaviate.schema import ensure_bookkeeping_collection

    old_kinds = {k: v for k, v in WeaviateLeases.KINDS.items() if k not in ("tenant", "source")}
    weaviate_client.collections.delete(LEASE_COLLECTION)  # no writer runs during the tests
    ensure_bookkeeping_collection(weaviate_client, LEASE_COLLECTION, "old", old_kinds)
    [lease] = source_leases(WeaviateLeases(weaviate_client), collection, ["faq"], command="ingest")
    with lease.held(wait=False):
        names = {
            p.name
            for p in weaviate_client.collections.use(LEASE_COLLECTION).config.get().properties
        }
        assert {"tenant", "source"} <= names
        stored = lease.read()
        assert stored is not None and stored.source == "faq"
        with pytest.raises(LockHeld, match="source 'faq'"):
            collection_lease(WeaviateLeases(weaviate_client), collection, command="drop").acquire(
                wait=False
            )


def test_of_two_writers_creating_a_free_lease_only_one_succeeds(
    weaviate_client: Any, collection: str
) -> None:
    """The lease is created with a create-only insert: the slower of two racers sees it exists."""
    first = Lease(WeaviateLeases(weaviate_client), collection, command="ingest")
    second = Lease(WeaviateLeases(weaviate_client), collection, command="ingest")
    WeaviateLeases(weaviate_client).ensure()
    assert first._create() is True
    assert second._create() is False
    stored = first.read()
    assert stored is not None and stored.token == first._token
    first.release()


def test_a_killed_writer_on_this_machine_is_taken_over_at_once(
    weaviate_client: Any, collection: str
) -> None:
    import socket

    gone = subprocess.Popen(["true"])
    gone.wait()
    plant_lease(
        weaviate_client, collection, host=socket.gethostname(), expires_in=600, pid=gone.pid
    )
    lease = Lease(WeaviateLeases(weaviate_client), collection, command="ingest")
    lease.acquire(wait=False)
    stored = lease.read()
    assert stored is not None and stored.pid == os.getpid()
    lease.release()


def test_a_live_writer_on_this_machine_is_not_taken_over(
    weaviate_client: Any, collection: str
) -> None:
    import socket

    plant_lease(
        weaviate_client, collection, host=socket.gethostname(), expires_in=600, pid=os.getppid()
    )
    with pytest.raises(LockHeld, match=f"pid {os.getppid()}"):
        Lease(WeaviateLeases(weaviate_client), collection, command="ingest").acquire(wait=False)
