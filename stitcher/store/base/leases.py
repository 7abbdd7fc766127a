"""Where writers hold their leases (`LeaseKeeping`, `LeaseBoard`; used by stitcher.locks)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from stitcher.errors import FaultKind


class LeaseBoard(Protocol):
    """The leases of one server's collections (stitcher.locks): one record per locked
    collection, tenant or source, by id. `create` makes a record only when none has that id, so
    of two writers racing for a free lease one wins."""

    def ensure(self) -> None:
        """Make the board ready to hold leases (on Weaviate: its bookkeeping collection)."""
        ...

    def read(self, lease_id: str) -> dict[str, Any] | None:
        """The record with this id, or None."""
        ...

    def create(self, lease_id: str, record: Mapping[str, Any]) -> bool:
        """Store `record` under `lease_id`; False, and nothing changed, when one exists."""
        ...

    def records_of(self, collection: str) -> list[dict[str, Any]]:
        """Every record whose "collection" value is `collection`."""
        ...

    def update(self, lease_id: str, changes: Mapping[str, Any]) -> None:
        """Change some values of the existing record `lease_id`."""
        ...

    def delete(self, lease_id: str) -> None:
        """Remove the record `lease_id` if there is one."""
        ...

    def fault_kind(self, error: BaseException) -> FaultKind | None:
        """What an error raised by one of the methods above was, by its type (stitcher.faults:
        whether stitcher.locks retries it); None when it is not the board's own kind of error."""
        ...


class LeaseKeeping(Protocol):
    """Where writers of the server's collections hold their leases (stitcher.locks)."""

    def leases(self) -> LeaseBoard:
        """Where writers of the collections on this store's server hold their leases."""
        ...
