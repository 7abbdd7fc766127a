"""The Weaviate server as a `StoreServer`: what is about the server, not one collection (its
collections, its version, its filesystem backups), and the stores of its collections."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from stitcher.config import ConnectionSettings
from stitcher.store.base import BackupOutcome, StoreServer
from stitcher.store.weaviate.connection import connect
from stitcher.store.weaviate.store import WeaviateStore

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate

    from stitcher.server import Notice

#: The collection a store opened only to ask about the server is bound to (it is never read).
_ANY_COLLECTION = "Stitcher"


class WeaviateServer:
    """One Weaviate server reached through a connected client (the caller closes it, or
    `close` here)."""

    def __init__(self, client: weaviate.WeaviateClient) -> None:
        self._client = client

    @property
    def client(self) -> weaviate.WeaviateClient:
        """The connected client."""
        return self._client

    def store(self, name: str, *, tenant: str | None = None) -> WeaviateStore:
        """The store of collection `name` (and `tenant`), with the default settings."""
        return WeaviateStore(self._client, name, tenant=tenant)

    def collection_names(self) -> list[str]:
        """The server's collections, sorted, stitcher's bookkeeping ones left out."""
        # Any store of the server lists its collections (with its retries and one-line errors).
        return self.store(_ANY_COLLECTION).collection_names()

    def version(self) -> str:
        """The server's version, "?" when it does not say."""
        return str(self._client.get_meta().get("version", "?"))

    def backup(self, backup_id: str, collections: Sequence[str]) -> BackupOutcome:
        """Back `collections` up with the server's filesystem backend, waiting until it ends."""
        from weaviate.backup.backup import BackupStorage

        result = self._client.backup.create(
            backup_id=backup_id,
            backend=BackupStorage.FILESYSTEM,
            include_collections=list(collections),
            wait_for_completion=True,
        )
        return _outcome(result)

    def restore(self, backup_id: str, collections: Sequence[str] | None) -> BackupOutcome:
        """Restore `collections` (None: every one in the backup) from the filesystem backend,
        waiting until it ends."""
        from weaviate.backup.backup import BackupStorage

        result = self._client.backup.restore(
            backup_id=backup_id,
            backend=BackupStorage.FILESYSTEM,
            include_collections=list(collections) if collections else None,
            wait_for_completion=True,
        )
        return _outcome(result)

    def close(self) -> None:
        """Close the client."""
        self._client.close()


def connect_server(settings: ConnectionSettings, *, notice: Notice | None = None) -> WeaviateServer:
    """The server `settings` name, connected (see `connect`); the caller closes it."""
    return WeaviateServer(connect(settings, notice=notice))


def _outcome(result: Any) -> BackupOutcome:
    status = getattr(result, "status", "")
    collections = getattr(result, "collections", None)
    return BackupOutcome(
        status=str(getattr(status, "value", status)),
        error=getattr(result, "error", None) or None,
        collections=tuple(collections) if collections else None,
    )


if TYPE_CHECKING:
    # mypy checks here that the Weaviate server keeps the server-level protocol.
    _weaviate_is_a_store_server: type[StoreServer] = WeaviateServer
