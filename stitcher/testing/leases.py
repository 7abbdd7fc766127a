"""The contract of the server's lease board (`LeaseKeeping`)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from stitcher.faults import is_transient
from stitcher.store.base import ChunkStore
from stitcher.testing.kit import StoreFixtures


class LeaseKeepingContract(StoreFixtures):
    """The server's lease board (`LeaseKeeping`)."""

    def test_a_lease_record_is_created_once_changed_and_deleted(self, store: ChunkStore) -> None:
        board = store.leases()
        board.ensure()
        lease_id = str(uuid.uuid4())
        now = datetime.now(timezone.utc).replace(microsecond=0)
        record = {"collection": store.name, "host": "h", "pid": 7, "command": "ingest"}
        record.update({"token": "first", "acquired_at": now, "expires_at": now})
        try:
            assert board.read(lease_id) is None
            assert board.create(lease_id, record) is True
            assert board.create(lease_id, {**record, "token": "second"}) is False
            assert (board.read(lease_id) or {})["token"] == "first"
            board.update(lease_id, {"expires_at": now + timedelta(minutes=2)})
            stored = board.read(lease_id) or {}
            assert stored["expires_at"] == now + timedelta(minutes=2)
            assert stored["token"] == "first" and stored["acquired_at"] == now
            board.delete(lease_id)
            assert board.read(lease_id) is None
            board.delete(lease_id)  # gone already: nothing happens
        finally:
            board.delete(lease_id)

    def test_the_board_tells_its_own_failures_apart(self, store: ChunkStore) -> None:
        """An update of a lease that is not there fails, and its board calls that nothing
        a retry would mend (stitcher.locks retries what `fault_kind` calls transient)."""
        board = store.leases()
        board.ensure()
        with pytest.raises(Exception) as raised:
            board.update(str(uuid.uuid4()), {"token": "none"})
        assert board.fault_kind(raised.value) in (None, "refused")
        assert not is_transient(raised.value, board.fault_kind)
        assert board.fault_kind(ValueError("connection reset")) is None  # not the board's own
