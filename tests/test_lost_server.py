"""What a command says, and when it gives up, after its server is killed (real server, SIGKILL).

Run alone with `pytest -m faults`.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from stitcher import server
from stitcher.locks import Lease
from stitcher.retry import RetryPolicy
from stitcher.store.weaviate.faults import classify_client_error
from stitcher.store.weaviate.leases import WeaviateLeases

pytestmark = pytest.mark.faults


@pytest.fixture
def own_server(tmp_path: Path, weaviate_server: Any) -> Iterator[server.ServerInfo]:
    """A server of the test's own (it gets killed); stopped afterwards."""
    home = tmp_path / "server-home"
    home.mkdir()
    try:
        yield server.start(home, timeout=120)
    finally:
        server.stop(home)


def _kill(info: server.ServerInfo) -> None:
    process = psutil.Process(info.pid)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)


def test_a_lease_that_cannot_be_renewed_warns_once_in_one_readable_line(
    own_server: server.ServerInfo,
) -> None:
    from tests.test_faults import _connect

    client = _connect(own_server)
    notices: list[str] = []
    # Renewed every 0.2 s: several renewals fail while the block runs on a dead server.
    lease = Lease(
        WeaviateLeases(client), "LeaseLost", command="ingest", seconds=0.6, notice=notices.append
    )
    try:
        with lease.held(wait=False):
            _kill(own_server)
            time.sleep(3)
        # What the client raises for a server that is gone is a lost connection, by type.
        for request in (
            lambda: client.collections.use("LeaseLost").query.fetch_objects(limit=1),  # gRPC
            lambda: client.collections.exists("LeaseLost"),  # REST
        ):
            with pytest.raises(Exception) as raised:
                request()
            assert classify_client_error(raised.value).kind == "connection", repr(raised.value)
    finally:
        client.close()
    renewals = [n for n in notices if "renew" in n]
    assert renewals == [
        "warning: could not renew the lease on 'LeaseLost' (the server cannot be reached); "
        "trying again"
    ], notices
    assert all("\n" not in n and "Error" not in n and "<" not in n for n in notices), notices


def test_an_ingest_gives_up_on_a_killed_server_within_the_retry_budget(
    own_server: server.ServerInfo, tmp_path: Path
) -> None:
    """The README's budget holds end to end: no layer (the client's own gRPC retries, the
    lease's renewal and release, the store's retries) adds its own on top."""
    from tests.test_faults import (
        _one_error_line,
        _url_args,
        _wait_until_stopped,
        _write_corpus,
        ingest_command,
        stitcher_env,
    )

    budget = RetryPolicy().total_seconds
    docs = _write_corpus(tmp_path / "corpus", 2)
    proc = subprocess.Popen(
        ingest_command(docs, "GiveUp", *_url_args(own_server)),
        env=stitcher_env(STITCHER_FAULT_POINT="write:2:stop"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_until_stopped(proc)
    _kill(own_server)
    started = time.monotonic()
    proc.send_signal(signal.SIGCONT)
    _out, err = proc.communicate(timeout=10 * budget)  # a hang guard, not the measure
    gave_up_after = time.monotonic() - started
    print(f"gave up {gave_up_after:.1f} s after the server was killed (budget {budget:.0f} s)")
    assert proc.returncode == 1, err
    assert "lost the connection to Weaviate" in _one_error_line(err)
    assert not [line for line in err.splitlines() if line[:1].isspace()], err  # no dumps
    assert "_InactiveRpcError" not in err and "Traceback" not in err, err
    # The budget, and half of it again for the attempt in flight and the way out.
    assert gave_up_after <= 1.5 * budget, err
