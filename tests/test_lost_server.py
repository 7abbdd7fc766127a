"""What a command says, and when it gives up, after its server is killed (real server, SIGKILL).

Run alone with `pytest -m faults`.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from stitcher import server
from stitcher.locks import Lease
from stitcher.store.wleases import WeaviateLeases

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
    finally:
        client.close()
    renewals = [n for n in notices if "renew" in n]
    assert renewals == [
        "warning: could not renew the lease on 'LeaseLost' (the server cannot be reached); "
        "trying again"
    ], notices
    assert all("\n" not in n and "Error" not in n and "<" not in n for n in notices), notices
