"""`Stitcher`: the one entry point of the library. The CLI is a thin wrapper over it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from stitcher.config import (
    DEFAULT_ALPHA,
    DEFAULT_COLLECTION,
    DEFAULT_MAX_EXTEND,
    ConnectionSettings,
    connection_settings,
    stitcher_home,
)
from stitcher.errors import CollectionMissing, LockHeld, SettingsMismatch
from stitcher.filters import Where
from stitcher.ingest import IngestOptions, IngestProgress, IngestSummary
from stitcher.models import CollectionSettings, Passage
from stitcher.search import SearchOptions, SearchResult

if TYPE_CHECKING:
    from stitcher.embed import Embedder, ModelRef
    from stitcher.store.weaviate import WeaviateStore

Notice = Callable[[str], None]


class Stitcher:
    """A connection to one Weaviate collection, for ingesting and searching.

    Args:
        url: Weaviate URL (``http://host:8080`` or a Weaviate Cloud URL). None: the local server
            under ``$STITCHER_HOME``, started when it is not running (and left running).
        api_key: API key for `url` (else ``$WEAVIATE_API_KEY``); the local server's own key is
            read from its key file.
        collection: collection name (Weaviate capitalises the first letter).
        grpc_port: gRPC port of `url` when it is not 50051.
        notice: called with one-line notices (server started, no ONNX export yet, ...).

    Use it as a context manager, or call `close()`::

        with Stitcher() as s:
            s.ingest(["docs/"])
            for passage in s.search("how do I rebuild the kernel?"):
                print(passage.source, passage.text)
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = DEFAULT_COLLECTION,
        *,
        grpc_port: int | None = None,
        notice: Notice | None = None,
    ) -> None:
        from stitcher.ids import canonical_collection_name

        self.connection: ConnectionSettings = connection_settings(url, api_key, grpc_port)
        self.collection = canonical_collection_name(collection)
        self._notice: Notice = notice or (lambda message: None)
        self._client: Any = None
        self._store: WeaviateStore | None = None
        self._settings: CollectionSettings | None = None
        self._query_embedders: dict[str, Embedder] = {}

    # -- connection -------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The connected `weaviate.WeaviateClient` (connects on first use)."""
        if self._client is None:
            from stitcher.connect import connect

            self._client = connect(self.connection, notice=self._notice)
        return self._client

    @property
    def store(self) -> WeaviateStore:
        """The collection as a `ChunkStore`."""
        if self._store is None:
            from stitcher.store.weaviate import WeaviateStore

            self._store = WeaviateStore(self.client, self.collection)
        return self._store

    def close(self) -> None:
        """Close the connection (the local server keeps running)."""
        if self._client is not None:
            self._client.close()
            self._client = None
            self._store = None

    def __enter__(self) -> Stitcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ingest ----------------------------------------------------------------------------

    def ingest(
        self,
        paths: Sequence[str],
        *,
        model: str | None = None,
        options: IngestOptions | None = None,
        stdin: IO[str] | None = None,
        progress: IngestProgress | None = None,
        wait: bool = False,
    ) -> IngestSummary:
        """Bring the collection in line with the documents under `paths` (see stitcher.ingest).

        Two ingests into the same collection never interleave: the second raises LockHeld, or
        waits for the first with ``wait=True``.
        """
        from stitcher.embed import resolve_model
        from stitcher.ingest import ingest

        model_ref = resolve_model(model)
        loaded: list[Any] = []

        def make_embedder() -> Any:
            from stitcher.embed import document_embedder, export_onnx, onnx_export_dir

            embedder = document_embedder(model_ref, (options or IngestOptions()).batch_size)
            loaded.append(embedder)
            if onnx_export_dir(model_ref) is None:
                # torch is loaded now anyway: this is the cheap moment to prepare the fast
                # query path that `stitcher search` uses.
                self._notice(f"exporting {model_ref.name} to ONNX for fast searches (once)")
                export_onnx(model_ref)
            return embedder

        with self._ingest_lock(wait):
            summary = ingest(
                self.store,
                paths,
                model_name=model_ref.name,
                embedder=make_embedder,
                options=options or IngestOptions(),
                stdin=stdin,
                progress=progress,
            )
        self._settings = None
        return summary

    @contextmanager
    def _ingest_lock(self, wait: bool) -> Iterator[None]:
        from filelock import FileLock, Timeout

        where = self.connection.url or f"local:{stitcher_home()}"
        key = hashlib.sha256(f"{where}\x00{self.collection}".encode()).hexdigest()[:16]
        path = stitcher_home() / "locks" / f"ingest-{key}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path), timeout=-1 if wait else 0)
        try:
            lock.acquire()
        except Timeout:
            raise LockHeld(
                f"another ingest into {self.collection!r} is running; "
                "wait for it, or pass --wait to queue behind it"
            ) from None
        try:
            yield
        finally:
            lock.release()

    # -- search ----------------------------------------------------------------------------

    def collection_settings(self) -> CollectionSettings:
        """The settings recorded on the collection (read once per instance)."""
        if self._settings is None:
            store = self.store
            if not store.exists():
                raise CollectionMissing(self._missing_message())
            settings = store.settings()
            if settings is None:
                raise SettingsMismatch(
                    f"collection {self.collection!r} has no stitcher settings on it; "
                    "it was not created by `stitcher ingest`"
                )
            self._settings = settings
        return self._settings

    def _missing_message(self) -> str:
        names = sorted(self.client.collections.list_all(simple=True))
        listing = ", ".join(names) if names else "none yet: run `stitcher ingest PATH` first"
        return f"collection {self.collection!r} does not exist; existing collections: {listing}"

    def query_embedder(self, model: str | None = None) -> Embedder:
        """The embedder for queries: the collection's own model, via ONNX when exported."""
        from stitcher.embed import query_embedder, resolve_model

        settings = self.collection_settings()
        ref: ModelRef = resolve_model(model or settings.model)
        if ref.name != settings.model:
            raise SettingsMismatch(
                f"collection {self.collection!r} was embedded with {settings.model!r}, "
                f"not {ref.name!r}: search it without --model or with that model"
            )
        if ref.name not in self._query_embedders:
            embedder = query_embedder(ref, notice=self._notice)
            if settings.dimension and embedder.dimension != settings.dimension:
                raise SettingsMismatch(
                    f"model {ref.name!r} gives {embedder.dimension}-dimensional vectors but "
                    f"collection {self.collection!r} holds {settings.dimension}-dimensional ones"
                )
            self._query_embedders[ref.name] = embedder
        return self._query_embedders[ref.name]

    def search_result(
        self,
        query: str,
        *,
        options: SearchOptions | None = None,
        model: str | None = None,
    ) -> SearchResult:
        """One query with timing and round-trip count (what `stitcher search --json` prints)."""
        from stitcher.search import search

        embedder = self.query_embedder(model)
        return search(self.store, query, embedder.embed_query, options or SearchOptions())

    def search(
        self,
        query: str,
        limit: int = 5,
        alpha: float = DEFAULT_ALPHA,
        where: Where | None = None,
        *,
        fusion: str = "relative",
        stitch: bool = True,
        max_extend: int = DEFAULT_MAX_EXTEND,
    ) -> list[Passage]:
        """Hybrid search; each hit comes back as whole sentences (see stitcher.search).

        Args:
            query: the question or keywords (Chinese and English alike).
            limit: at most this many passages.
            alpha: weight of the vector side: 1 vector only, 0 keyword (BM25) only.
            where: a filter applied inside Weaviate before ranking.
            fusion: "relative" (relativeScoreFusion) or "ranked" (rankedFusion).
            stitch: False returns the raw chunks.
            max_extend: how many characters stitching may add on each side of a hit.
        """
        options = SearchOptions(
            limit=limit,
            alpha=alpha,
            fusion=fusion,
            stitch=stitch,
            max_extend=max_extend,
            where=where,
        )
        return self.search_result(query, options=options).passages

    def drop(self) -> bool:
        """Delete the whole collection. Returns False when it did not exist."""
        if not self.store.exists():
            return False
        self.client.collections.delete(self.collection)
        self._settings = None
        return True


def export_model(model: str | None = None) -> Path:
    """Export `model` (default: the packaged MiniLM) to ONNX for the fast query path."""
    from stitcher.embed import export_onnx, resolve_model

    return export_onnx(resolve_model(model))
