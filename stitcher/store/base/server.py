"""The server-level seam (`StoreServer`): a server's collections, its version, backups of several
collections at once, and the store of each collection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stitcher.store.base import ChunkStore


@dataclass(frozen=True)
class BackupOutcome:
    """How a server's backup or restore ended: its status as the server words it ("SUCCESS",
    "FAILED", ...), the server's reason when there is one, and the collections it held (None
    when the server did not say)."""

    status: str
    error: str | None = None
    collections: tuple[str, ...] | None = None


class StoreServer(Protocol):
    """One server of collections: what is about the server rather than one collection (its
    collections, its version, backups of several collections at once), and the store of each."""

    def store(self, name: str, *, tenant: str | None = None) -> ChunkStore:
        """The store of collection `name` (of its tenant `tenant`) on this server."""
        ...

    def collection_names(self) -> list[str]:
        """The server's collections, sorted, stitcher's bookkeeping ones left out."""
        ...

    def version(self) -> str:
        """The server's version ("?" when it does not say)."""
        ...

    def backup(self, backup_id: str, collections: Sequence[str]) -> BackupOutcome:
        """Back `collections` up under `backup_id` (the server's own backup), to the end."""
        ...

    def restore(self, backup_id: str, collections: Sequence[str] | None) -> BackupOutcome:
        """Restore `collections` of backup `backup_id` (None: all of them), to the end."""
        ...

    def close(self) -> None:
        """Let go of the server (its connection); the stores it opened are unusable after."""
        ...
