"""Every writer (ingest, adopt, drop, entities load) holds a file lock keyed by the normalised
server and collection, and a lease stored in Weaviate that another host takes over only after
it expired."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stitcher.bookkeeping import LEASE_COLLECTION
from stitcher.config import ConnectionSettings
from stitcher.errors import ExitStatus, LockHeld
from stitcher.locks import Lease, server_identity
from stitcher.store.memory import MemoryServer, MemoryStore
from stitcher.store.weaviate import WeaviateLeases, bookkeeping_uuid
from tests.test_sources import ROOT, STITCHER, cli, make_root


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
    with holder._ingest_lock(wait=False), pytest.raises(LockHeld) as refused:
        other._ingest_lock(wait=False).__enter__()
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

    class Watch(SilentProgress):
        def file_done(self, source: str) -> None:
            seen.append(Lease(WeaviateLeases(weaviate_client), collection, command="x").read())

    url, key = weaviate_server.url, weaviate_server.api_key()
    with Stitcher(url, key, collection, grpc_port=weaviate_server.grpc_port) as s:
        s.ingest([str(make_root(tmp_path, "a"))], progress=Watch())
    assert seen and all(lease is not None and lease.pid == os.getpid() for lease in seen)
    assert Lease(WeaviateLeases(weaviate_client), collection, command="x").read() is None


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


def test_two_ingest_processes_never_interleave(
    weaviate_client: Any, collection: str, tmp_path: Path
) -> None:
    """The first `stitcher ingest -` holds the lock while it waits for paths on stdin; every
    other writer started meanwhile is refused with the holder named."""
    docs = make_root(tmp_path, "a")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(
        [str(STITCHER), "ingest", "-", "--collection", collection],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        watcher = Lease(WeaviateLeases(weaviate_client), collection, command="x")
        holder = None
        while holder is None and first.poll() is None:
            WeaviateLeases(weaviate_client).ensure()
            holder = watcher.read()
        assert holder is not None and holder.pid == first.pid

        second = cli("ingest", str(docs), "--collection", collection)
        assert second.returncode == ExitStatus.BUSY
        assert f"pid {first.pid}" in second.stderr and "--wait" in second.stderr
        for args in (
            ("drop", "--collection", collection, "--yes"),
            ("adopt", "--collection", collection),
            ("entities", "load", str(tmp_path / "none.jsonl"), "--collection", collection),
        ):
            (tmp_path / "none.jsonl").write_text("", encoding="utf-8")
            refused = cli(*args)
            assert refused.returncode == ExitStatus.BUSY, (args, refused.stderr)
            assert f"pid {first.pid}" in refused.stderr
    finally:
        _out, err = first.communicate("", timeout=600)
    assert first.returncode == 0, err
    assert watcher.read() is None


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
