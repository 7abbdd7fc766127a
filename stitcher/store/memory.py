"""A ChunkStore in dicts: the same behaviour as WeaviateStore, for unit tests without a server.

Values go through the same conversion as in Weaviate (stitcher.store.schema), filters follow
Weaviate's semantics (whole-value matching on field-tokenized text, word-by-word matching on
`text` and `title`), and hybrid search fuses a small BM25 over the segmented keyword text with
cosine similarity the way Weaviate's relative-score and ranked fusions do.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stitcher.errors import (
    CollectionMissing,
    FaultKind,
    FilterError,
    MetadataConflict,
    SettingsMismatch,
    TenancyMismatch,
    TenantMissing,
    UsageError,
    setting,
)
from stitcher.filters import Condition, Where
from stitcher.graph.model import KINDS, MENTIONED_KIND, Entity, build_graph
from stitcher.graph.paths import (
    MENTIONS,
    PathTest,
    entity_values,
    is_path,
    no_links_message,
    path_test,
)
from stitcher.graph.resolve import Resolver
from stitcher.ids import checked_tenant_name, source_of
from stitcher.models import (
    ChunkRecord,
    CollectionSettings,
    Hit,
    PendingDocument,
    ScoreExplain,
    SeedObject,
    SpanRequest,
    StoredDocument,
    TenantInfo,
    WriteFailure,
)
from stitcher.store.base import ChunkStore, Layout, check_fusion, scope_of
from stitcher.store.entities import EntityView, entity_links, find_entity
from stitcher.store.schema import (
    SOURCE_FIELD,
    ExtraProperty,
    Kind,
    contains_pattern,
    filter_value,
    filter_values,
    no_tenants,
    plan_properties,
    properties_to_record,
    property_name,
    record_to_properties,
    resolve_field,
    some_names,
    source_names,
    tenancy_mismatch,
    user_fields,
)

# Weaviate's defaults: BM25 parameters, candidates per hybrid side, the ranked-fusion constant.
_K1 = 1.2
_B = 0.75
_CANDIDATES = 100
_RANK_OFFSET = 60

_WORD_RE = re.compile(r"[^\W_]+")
_LIKE_TOKEN_RE = re.compile(r"(?:[^\W_]|[*?])+")

Predicate = Callable[[dict[str, Any]], bool]


class MemoryEntities:
    """Entities of one collection held in memory: what the graph conditions look up."""

    def __init__(self, collection: str) -> None:
        self._collection = collection
        self._by_kind: dict[str, dict[str, Entity]] = {}

    @property
    def collection(self) -> str:
        """The chunk collection the entities belong to."""
        return self._collection

    def load(self, entities: Iterable[Entity]) -> None:
        """Create or replace entities by (kind, id)."""
        for entity in entities:
            self._by_kind.setdefault(entity.kind, {})[entity.id] = entity

    def exists(self, kind: str = MENTIONED_KIND) -> bool:
        """Whether entities of `kind` were loaded."""
        return kind in self._by_kind

    def entities(self, kinds: Iterable[str] = tuple(KINDS)) -> list[Entity]:
        """Every loaded entity of `kinds`."""
        return [entity for kind in kinds for entity in self._by_kind.get(kind, {}).values()]

    def resolver(self, kind: str = MENTIONED_KIND) -> Resolver:
        """Name and alias lookup over the loaded entities of `kind`."""
        return Resolver(self.entities([kind]), kind)

    def show(self, name: str, kind: str | None = None) -> EntityView:
        """The entity `name` means and its links in both directions. Where it is mentioned is
        not known: the in-memory store keeps `mentions` as text and links none."""
        entities = self.entities([kind] if kind else list(KINDS))
        entity = find_entity(entities, name, f"collection {self._collection!r}")
        return EntityView(entity, entity_links(self.entities(), entity))


class MemoryLeases:
    """The leases of one in-memory server: records by id, created only when none exists."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        # The lease's renewal thread writes while its holder reads.
        self._lock = threading.Lock()

    def ensure(self) -> None:
        """Nothing to prepare in memory."""

    def read(self, lease_id: str) -> dict[str, Any] | None:
        """A copy of the record, or None."""
        with self._lock:
            record = self._records.get(lease_id)
            return None if record is None else dict(record)

    def create(self, lease_id: str, record: Mapping[str, Any]) -> bool:
        """Store a copy of `record`; False when one with this id exists."""
        with self._lock:
            if lease_id in self._records:
                return False
            self._records[lease_id] = dict(record)
            return True

    def records_of(self, collection: str) -> list[dict[str, Any]]:
        """Copies of every record of `collection`."""
        with self._lock:
            return [dict(r) for r in self._records.values() if r.get("collection") == collection]

    def update(self, lease_id: str, changes: Mapping[str, Any]) -> None:
        """Change some values of the record (KeyError when there is none, as Weaviate fails)."""
        with self._lock:
            self._records[lease_id].update(changes)

    def delete(self, lease_id: str) -> None:
        """Remove the record if there is one."""
        with self._lock:
            self._records.pop(lease_id, None)

    def fault_kind(self, error: BaseException) -> FaultKind | None:
        """None: dicts raise nothing that retrying would mend."""
        return None


class MemoryServer:
    """What the in-memory stores of one "server" share, as stores on one Weaviate do: which
    collections exist, and the leases."""

    def __init__(self) -> None:
        self.collections: dict[str, MemoryStore] = {}
        self.leases = MemoryLeases()
        #: Multi-tenant collections: their tenants' stores by name, the settings they share,
        #: and each tenant's activity status ("ACTIVE" or "INACTIVE") by (collection, tenant).
        self.tenants: dict[str, dict[str, MemoryStore]] = {}
        self.tenant_settings: dict[str, CollectionSettings] = {}
        self.status: dict[tuple[str, str], str] = {}

    def multi_tenant(self, name: str) -> bool | None:
        """Whether collection `name` is multi-tenant; None when it does not exist."""
        if name in self.tenants:
            return True
        store = self.collections.get(name)
        return False if store is not None and store.exists() else None


class MemoryStore:
    """One collection held in memory. Not thread-safe, like the Weaviate batch writer.

    Stores given the same `server` see each other's collections and leases; without one, a
    store is alone on a server of its own.
    """

    def __init__(
        self, name: str, server: MemoryServer | None = None, tenant: str | None = None
    ) -> None:
        self._tenant = checked_tenant_name(tenant)
        self._name = name[:1].upper() + name[1:]
        self._server = MemoryServer() if server is None else server
        self._settings: CollectionSettings | None = None
        self._created = False
        self._objects: dict[str, tuple[dict[str, Any], list[float]]] = {}
        self._extras: dict[str, ExtraProperty] = {}
        self._dimension: int | None = None
        self._source_roots: dict[str, str] = {}
        self._seed: dict[str, SeedObject] = {}  # a seed-layout collection's objects (load_seed)
        self._markers: dict[str, dict[str, Any]] = {}
        #: Documents being written (begin_documents), doc_id -> their version's chunk count.
        self._pending: dict[str, int] = {}
        self._entities = MemoryEntities(self._name)

    @property
    def name(self) -> str:
        """The collection's name, first letter upper-cased as Weaviate does."""
        return self._name

    @property
    def tenant(self) -> str | None:
        """The tenant this store is bound to (None: a single-tenant collection)."""
        return self._tenant

    @property
    def scope(self) -> str:
        """What this store holds, for messages: "'Docs'" or "tenant 'kb1' of 'Docs'"."""
        return scope_of(self._name, self._tenant)

    def exists(self) -> bool:
        """Whether `create` was called (single-tenant: or the name is a multi-tenant
        collection, which `settings` then refuses, as on Weaviate)."""
        if self._tenant is None:
            return self._created or self._name in self._server.tenants
        self._check_tenancy()
        return self._created

    def collection_exists(self) -> bool:
        """Whether the collection exists, whatever this store's tenant."""
        return self._created or self._server.multi_tenant(self._name) is not None

    def is_multi_tenant(self) -> bool:
        """Whether the (existing) collection is multi-tenant."""
        return bool(self._server.multi_tenant(self._name))

    def tenants(self, *, count: bool = True) -> list[TenantInfo]:
        """The tenants of the collection with their status and, when active, chunk counts."""
        if self._server.multi_tenant(self._name) is None:
            raise CollectionMissing(f"collection {self._name!r} does not exist")
        if not self._server.multi_tenant(self._name):
            raise no_tenants(self._name)
        infos = []
        for name, store in sorted(self._server.tenants[self._name].items()):
            status = self._server.status[(self._name, name)]
            chunks = len(store._objects) if count and status == "ACTIVE" else None
            infos.append(TenantInfo(name, status, chunks))
        return infos

    def set_tenant_active(self, name: str, active: bool) -> str:
        """Mark a tenant active or inactive; returns its status before."""
        tenants = self._server.tenants.get(self._name, {})
        if name not in tenants:
            raise TenantMissing(
                f"collection {self._name!r} has no tenant {name!r}; its tenants: "
                f"{some_names(sorted(tenants))}"
            )
        before = self._server.status[(self._name, name)]
        self._server.status[(self._name, name)] = "ACTIVE" if active else "INACTIVE"
        return before

    def _check_tenancy(self) -> None:
        multi_tenant = self._server.multi_tenant(self._name)
        if multi_tenant is not None:
            refusal = tenancy_mismatch(self._name, self._tenant, multi_tenant)
            if refusal is not None:
                raise refusal

    def drop(self, *, all_tenants: bool = False) -> bool:
        """Forget the collection, its chunks and sources; False when it did not exist. Entities
        stay, as in Weaviate, where they are collections of their own. A tenant store forgets
        its tenant only; a multi-tenant collection goes as a whole only with `all_tenants`."""
        if self._tenant is not None:
            if not self.exists():
                return False
            self._server.tenants[self._name].pop(self._tenant, None)
            self._server.status.pop((self._name, self._tenant), None)
            self._forget()
            return True
        if self._name in self._server.tenants:
            tenants = self._server.tenants[self._name]
            if not all_tenants:
                held = len(tenants)
                raise TenancyMismatch(
                    f"collection {self._name!r} is multi-tenant and holds {held} tenant"
                    f"{'s' if held != 1 else ''}: drop one with {setting('tenant', 'NAME')}, or "
                    f"the collection with all of them with {setting('all_tenants', True)}"
                )
            for name, store in list(tenants.items()):
                self._server.status.pop((self._name, name), None)
                store._forget()
            del self._server.tenants[self._name]
            self._server.tenant_settings.pop(self._name, None)
            return True
        return self._forget()

    def _forget(self) -> bool:
        existed = self._created
        self._created = False
        self._server.collections.pop(self._name, None)
        self._settings = None
        self._objects.clear()
        self._extras.clear()
        self._dimension = None
        self._source_roots.clear()
        self._seed.clear()
        self._markers.clear()
        self._pending.clear()
        return existed

    def layout(self) -> Layout:
        """ "stitcher" when settings were recorded, "seed" when `load_seed` filled it."""
        self._require()
        if self._settings is not None:
            return "stitcher"
        return "seed" if self._seed else "unknown"

    def entities(self) -> MemoryEntities:
        """The entities loaded for this collection (`MemoryEntities.load`)."""
        return self._entities

    def create(self, settings: CollectionSettings) -> None:
        """Create the (empty) collection and record `settings`; a tenant store creates its
        tenant, and the collection (multi-tenant) if it is new."""
        if self._tenant is not None:
            self._check_tenancy()
            shared = self._server.tenant_settings.get(self._name)
            if shared is None:
                shared = replace(settings, multi_tenant=True)
                self._server.tenant_settings[self._name] = shared
            elif settings.differences(shared):
                raise SettingsMismatch(
                    f"collection {self._name!r} was built with other settings: "
                    + "; ".join(settings.differences(shared))
                )
            self._server.tenants.setdefault(self._name, {})[self._tenant] = self
            self._server.status[(self._name, self._tenant)] = "ACTIVE"
            self._created = True
            self._settings = shared
            self._dimension = shared.dimension
            return
        self._created = True
        self._server.collections[self._name] = self
        self._settings = settings
        self._dimension = settings.dimension

    def collection_names(self) -> list[str]:
        """The collections created on this store's server and not dropped, sorted."""
        single = {name for name, store in self._server.collections.items() if store.exists()}
        return sorted(single | set(self._server.tenants))

    def leases(self) -> MemoryLeases:
        """The leases of this store's server."""
        return self._server.leases

    def check_replication(self) -> None:
        """Nothing to refuse: the in-memory store keeps one copy and is asked for no factor."""

    def replication(self) -> dict[str, Any]:
        """One copy, on no node."""
        self._require()
        return {"replication_factor": 1, "consistency": "QUORUM", "shards": {}}

    def take_unresolved_mentions(self) -> dict[str, list[str]]:
        """Always {}: the in-memory store keeps `mentions` as text and links none."""
        return {}

    def settings(self) -> CollectionSettings | None:
        """The settings given to `create`."""
        self._check_tenancy()
        self._require()
        return self._settings

    def count(self) -> int:
        """Number of chunk objects."""
        self._wake()
        return len(self._objects)

    def documents(self) -> dict[str, StoredDocument]:
        """Every document, keyed by doc_id."""
        hashes: dict[str, set[str]] = {}
        counts: Counter[str] = Counter()
        sources: dict[str, str] = {}
        rules: dict[str, set[str]] = {}
        for properties, _vector in self._objects.values():
            doc_id = properties["doc_id"]
            hashes.setdefault(doc_id, set()).add(properties["doc_hash"])
            counts[doc_id] += 1
            sources[doc_id] = properties["source"]
            rules.setdefault(doc_id, set()).add(properties.get("rules") or "")
        return {
            doc_id: StoredDocument(
                doc_id,
                frozenset(found),
                counts[doc_id],
                sources[doc_id],
                frozenset(rules[doc_id]),
                complete=doc_id not in self._pending,
            )
            for doc_id, found in hashes.items()
        }

    def begin_documents(self, documents: Sequence[PendingDocument]) -> None:
        """Record these document versions as incomplete."""
        self._require()
        for doc in documents:
            self._pending[doc.doc_id] = doc.chunk_count

    def finish_documents(self, doc_ids: Sequence[str]) -> None:
        """These documents are complete (or gone)."""
        for doc_id in doc_ids:
            self._pending.pop(doc_id, None)

    def source_roots(self) -> dict[str, str]:
        """The folder each source was registered from, by source name."""
        return dict(self._source_roots)

    def register_source(self, name: str, root: str) -> None:
        """Record (or move) source `name` to the folder `root`."""
        self._source_roots[name] = root

    def vectors_by_chunk_hash(
        self, doc_id: str, chunk_hashes: Iterable[str]
    ) -> dict[str, list[float]]:
        """Stored vectors of this document's chunks (any version) whose hash is in the set."""
        wanted = set(chunk_hashes)
        return {
            properties["chunk_hash"]: list(vector)
            for properties, vector in self._objects.values()
            if properties["doc_id"] == doc_id and properties["chunk_hash"] in wanted
        }

    def write(
        self, records: Sequence[ChunkRecord], vectors: Sequence[list[float]]
    ) -> list[WriteFailure]:
        """Insert or replace records; a wrong vector length or metadata type fails that record."""
        self._require()
        if len(records) != len(vectors):
            raise UsageError(f"write: {len(records)} records but {len(vectors)} vectors")
        failures: list[WriteFailure] = []
        for record, vector in zip(records, vectors, strict=True):
            try:
                values, new = plan_properties(record, self._extras)
            except MetadataConflict as exc:
                failures.append(WriteFailure(record.id, record.doc_id, str(exc)))
                continue
            if self._dimension is None:
                self._dimension = len(vector)
            if len(vector) != self._dimension:
                failures.append(
                    WriteFailure(
                        record.id,
                        record.doc_id,
                        f"vector has length {len(vector)}, the collection {self._dimension}",
                    )
                )
                continue
            for extra in new:
                self._extras[extra.name] = extra
            properties = record_to_properties(record, values)
            self._objects[record.id] = (properties, [float(x) for x in vector])
        return failures

    def delete_document(self, doc_id: str, keep_doc_hash: str | None = None) -> int:
        """Delete the document's chunks except those of version `keep_doc_hash`."""
        doomed = [
            object_id
            for object_id, (properties, _vector) in self._objects.items()
            if properties["doc_id"] == doc_id and properties["doc_hash"] != keep_doc_hash
        ]
        for object_id in doomed:
            del self._objects[object_id]
        if keep_doc_hash is None:
            self.finish_documents([doc_id])  # the whole document is gone
        return len(doomed)

    def fetch(self, ids: Sequence[str]) -> list[ChunkRecord]:
        """The records with these ids that exist."""
        unique = dict.fromkeys(ids)
        return [self._record(object_id) for object_id in unique if object_id in self._objects]

    def fetch_spans(self, requests: Sequence[SpanRequest]) -> list[ChunkRecord]:
        """All chunks overlapping any requested range of a document version."""
        found = []
        for object_id, (properties, _vector) in self._objects.items():
            for request in requests:
                if (
                    properties["doc_id"] == request.doc_id
                    and properties["doc_hash"] == request.doc_hash
                    and properties["start"] < request.hi
                    and properties["end"] > request.lo
                ):
                    found.append(self._record(object_id))
                    break
        return found

    def hybrid(
        self,
        text: str,
        keyword_text: str,
        vector: list[float],
        *,
        limit: int,
        alpha: float,
        fusion: str = "relative",
        where: Where | None = None,
    ) -> list[Hit]:
        """BM25 over `keyword_text` tokens and cosine similarity, fused like Weaviate does."""
        self._wake()
        check_fusion(fusion)
        predicate = self._predicate(where) if where else None
        allowed = [
            object_id
            for object_id, (properties, _vector) in self._objects.items()
            if predicate is None or predicate(properties)
        ]
        keyword_scores = self._bm25(keyword_text.split(), allowed) if alpha < 1 else {}
        vector_scores = self._similarities(vector, allowed) if alpha > 0 else {}
        return [
            Hit(self._record(object_id), score, explain)
            for object_id, score, explain in _fuse(
                keyword_scores, vector_scores, limit, alpha, fusion, label="memory"
            )
        ]

    def fields(self) -> dict[str, str]:
        """Filterable fields (core and metadata) with their kinds."""
        self._require()
        return dict(user_fields(self._extras))

    def stored_values(self, field: str, limit: int = 10_000) -> list[str]:
        """Distinct values of a text field (`source`: the source names), most common first."""
        self._require()
        name = "doc_id" if field == SOURCE_FIELD else resolve_field(field, self._extras)[0]
        counts: Counter[str] = Counter()
        for properties, _vector in self._objects.values():
            value = properties.get(name)
            for item in value if isinstance(value, list) else [value] if value else []:
                counts[source_of(str(item)) if field == SOURCE_FIELD else str(item)] += 1
        return [value for value, _ in counts.most_common(limit)]

    def heads(
        self, where: Where | None = None, *, limit: int = 100, newest_first: bool = False
    ) -> list[ChunkRecord]:
        """First chunks of matching documents, newest first if asked (undated last)."""
        self._require()
        predicate = self._predicate(where) if where else None
        found = [
            self._record(object_id)
            for object_id, (properties, _vector) in self._objects.items()
            if properties["chunk_index"] == 0 and (predicate is None or predicate(properties))
        ]
        if newest_first:
            found.sort(key=lambda r: (r.metadata.get("date") is None, _sort_key(r)))
        return found[:limit]

    def sample(self, limit: int = 100) -> list[ChunkRecord]:
        """Up to `limit` chunks."""
        return [self._record(object_id) for object_id in list(self._objects)[:limit]]

    def records_with_vectors(
        self, page_size: int = 500
    ) -> Iterator[tuple[ChunkRecord, list[float]]]:
        """Every chunk with its vector, in id order (as Weaviate's cursor returns them)."""
        self._require()
        for object_id in sorted(self._objects):
            yield self._record(object_id), list(self._objects[object_id][1])

    def _wake(self) -> None:
        """A read of an inactive tenant activates it, as Weaviate's auto_tenant_activation."""
        if self._tenant is not None and self._created:
            self._server.status[(self._name, self._tenant)] = "ACTIVE"

    def _require(self) -> None:
        self._wake()
        if not self._created and self._tenant is not None:
            raise TenantMissing(
                f"collection {self._name!r} has no tenant {self._tenant!r}; run `stitcher "
                f"ingest` with it to create it, or check {setting('tenant')}"
            )
        if not self._created:
            raise CollectionMissing(
                f"collection {self._name!r} does not exist; run `stitcher ingest` to create it"
            )

    def _record(self, object_id: str) -> ChunkRecord:
        return properties_to_record(object_id, self._objects[object_id][0], self._extras)

    def _bm25(self, query_tokens: list[str], allowed: list[str]) -> dict[str, float]:
        documents = {
            object_id: properties.get("text_seg", "").split()
            for object_id, (properties, _vector) in self._objects.items()
        }
        return _bm25_scores(documents, query_tokens, allowed)

    def _similarities(self, query: list[float], allowed: list[str]) -> dict[str, float]:
        query_norm = math.sqrt(sum(x * x for x in query)) or 1.0
        scores = {}
        for object_id in allowed:
            stored = self._objects[object_id][1]
            if len(stored) != len(query):
                raise UsageError(
                    f"query vector has length {len(query)}, the collection {len(stored)}"
                )
            norm = math.sqrt(sum(x * x for x in stored)) or 1.0
            scores[object_id] = sum(a * b for a, b in zip(query, stored, strict=True))
            scores[object_id] /= query_norm * norm
        return scores

    def _predicate(self, where: Where) -> Predicate:
        required = [self._condition(condition) for condition in where.all_of]
        alternatives = [self._condition(condition) for condition in where.any_of]

        def matches(properties: dict[str, Any]) -> bool:
            if not all(test(properties) for test in required):
                return False
            return not alternatives or any(test(properties) for test in alternatives)

        return matches

    def _condition(self, condition: Condition) -> Predicate:
        if is_path(condition.field):
            return self._path_condition(condition)
        if condition.field == SOURCE_FIELD:
            return _source_condition(condition)
        name, kind = resolve_field(condition.field, self._extras)
        op = condition.op
        if op == "any":
            options = filter_values(condition.field, kind, condition.value)
            return lambda p: any(_equals(kind, p.get(name), option) for option in options)
        if op == "contains":
            if kind not in ("text", "word", "text[]"):
                raise FilterError(f"'contains' works on text fields, not on {condition.field!r}")
            pattern = contains_pattern(str(condition.value))
            return lambda p: _like(kind, p.get(name), pattern)
        value = filter_value(condition.field, kind, condition.value)
        if op == "eq":
            return lambda p: _equals(kind, p.get(name), value)
        if op == "ne":
            return lambda p: not _equals(kind, p.get(name), value)
        compare = _COMPARISONS.get(op)
        if compare is None:
            raise FilterError(f"unknown filter operator {op!r}")
        return lambda p: _compare(p.get(name), value, compare)

    # -- graph references (issue 14): the store protocol's reference filters ----------------

    def _path_condition(self, condition: Condition) -> Predicate:
        """A condition on a path (`mentions.country=France`), run as Weaviate runs its reference
        filter (stitcher.store.weaviate.filters.path_filter), but at query time: a chunk's raw
        `mentions` resolve to organizations as its `mentions_ref` would (strictly, by name or
        alias, against the entities loaded now, as after `stitcher entities load` re-linked
        them), the path's links are followed, and the entities reached are compared."""
        test = path_test(condition)  # validates the path first: its errors are clearer
        raw = property_name(MENTIONS)
        if not self._entities.exists(MENTIONED_KIND) or raw not in self._extras:
            raise FilterError(no_links_message(condition.field, self._name))
        graph = build_graph(self._entities.entities())
        resolver = self._entities.resolver(MENTIONED_KIND)
        matches_entity = _entity_test(test)
        # Chunks of one document share their mentions: resolve and follow once per list.
        answers: dict[tuple[str, ...], bool] = {}

        def matches(properties: dict[str, Any]) -> bool:
            value = properties.get(raw)
            names = (value,) if isinstance(value, str) else tuple(value or ())
            if names not in answers:
                reached = {
                    (entity.kind, entity.id)
                    for entity in map(resolver.resolve, names)
                    if entity is not None
                }
                for link in test.path.links:
                    reached = {target for key in reached for target in graph.references[key][link]}
                answers[names] = any(matches_entity(graph.entities[key]) for key in reached)
            return answers[names]

        return matches

    # -- seed layout, markers, siblings (issue 14): what adopt and seed search need ----------

    def load_seed(self, objects: Iterable[SeedObject]) -> None:
        """Make this a collection in the seed's layout holding `objects` (as LangChain's
        WeaviateVectorStore stores them: `text`, `source`, `parent_id`, other metadata, vector),
        so adopt and seed search run without a server."""
        self._created = True
        self._server.collections[self._name] = self
        for obj in objects:
            self._seed[obj.id] = obj

    def sibling(self, name: str) -> MemoryStore:
        """The store of collection `name` on this store's server. Every call for one name gives
        the same store, as every handle of one Weaviate collection sees the same data (it lists
        among `collection_names` only once created)."""
        canonical = name[:1].upper() + name[1:]
        known = self._server.collections
        return known.setdefault(canonical, MemoryStore(canonical, self._server))

    def marker(self, key: str) -> dict[str, Any]:
        """The record kept under `key`, or {}."""
        self._require()
        return dict(self._markers.get(key, {}))

    def set_marker(self, key: str, record: Mapping[str, Any]) -> None:
        """Keep a copy of `record` under `key`."""
        self._require()
        self._markers[key] = dict(record)

    def seed_objects(
        self, properties: Sequence[str] | None = None, *, vectors: bool = True
    ) -> list[SeedObject]:
        """Every object as stored (seed layout or stitcher's), in id order."""
        self._require()
        found = []
        for object_id in sorted(self._seed):
            obj = self._seed[object_id]
            stored = {"text": obj.text, "source": obj.source, "parent_id": obj.parent_id}
            found.append(_as_seed(object_id, {**stored, **obj.extra}, obj.vector, properties))
        for object_id in sorted(self._objects):
            stored, vector = self._objects[object_id]
            found.append(_as_seed(object_id, stored, vector, properties))
        if not vectors:
            found = [replace(obj, vector=None) for obj in found]
        return found

    def seed_hybrid(
        self, query: str, vector: list[float], *, limit: int, alpha: float, fusion: str
    ) -> list[tuple[SeedObject, float, ScoreExplain | None]]:
        """BM25 over the word tokens of `text` (the seed's word tokenization) and cosine
        similarity, fused like `hybrid`."""
        check_fusion(fusion)
        self._require()
        tokens = {i: _WORD_RE.findall(obj.text.lower()) for i, obj in self._seed.items()}
        query_tokens = _WORD_RE.findall(query.lower())
        keyword = _bm25_scores(tokens, query_tokens) if alpha < 1 else {}
        similar = {}
        if alpha > 0:
            for object_id, obj in self._seed.items():
                similar[object_id] = _cosine(vector, obj.vector or [])
        fused = _fuse(keyword, similar, limit, alpha, fusion, label="memory seed")
        return [(replace(self._seed[i], vector=None), score, why) for i, score, why in fused]

    def seed_hop(self, parent_ids: Sequence[str], child_of: Sequence[str]) -> list[SeedObject]:
        """The seed objects with these ids or whose `parent_id` is one of `child_of`."""
        self._require()
        ids, parents = set(parent_ids), set(child_of)
        return [
            replace(obj, vector=None)
            for object_id, obj in sorted(self._seed.items())
            if object_id in ids or obj.parent_id in parents
        ]


def _as_seed(
    object_id: str,
    stored: Mapping[str, Any],
    vector: Sequence[float] | None,
    properties: Sequence[str] | None,
) -> SeedObject:
    """What Weaviate's cursor gives for one object (stitcher.store.weaviate.seed.to_seed_object)."""
    values = dict(stored) if properties is None else {k: stored.get(k) for k in properties}
    text = values.pop("text", None)
    source = values.pop("source", None)
    parent = values.pop("parent_id", None)
    return SeedObject(
        id=object_id,
        text=str(text or ""),
        source=str(source or ""),
        parent_id=str(parent) if parent else None,
        extra={k: v for k, v in values.items() if v is not None},
        vector=None if vector is None else [float(x) for x in vector],
    )


def _bm25_scores(
    documents: Mapping[str, list[str]],
    query_tokens: list[str],
    allowed: Iterable[str] | None = None,
) -> dict[str, float]:
    """BM25 with Weaviate's parameters over tokenized documents (`text_seg` for stitcher's
    layout, `text` for the seed's): statistics over every document, scores for `allowed` ones
    (all by default), as a pre-filtered query does."""
    if not query_tokens or not documents:
        return {}
    total = len(documents)
    average_length = sum(len(tokens) for tokens in documents.values()) / total or 1.0
    frequency: Counter[str] = Counter()
    for tokens in documents.values():
        frequency.update(set(tokens))
    scores = {}
    for object_id in documents if allowed is None else allowed:
        tokens = documents[object_id]
        counts = Counter(tokens)
        score = 0.0
        for token in dict.fromkeys(query_tokens):
            tf = counts.get(token, 0)
            if not tf:
                continue
            n = frequency[token]
            idf = math.log(1 + (total - n + 0.5) / (n + 0.5))
            norm = _K1 * (1 - _B + _B * len(tokens) / average_length)
            score += idf * tf * (_K1 + 1) / (tf + norm)
        if score > 0:
            scores[object_id] = score
    return scores


def _cosine(query: Sequence[float], stored: Sequence[float]) -> float:
    if len(stored) != len(query):
        raise UsageError(f"query vector has length {len(query)}, the collection {len(stored)}")
    norm = (math.sqrt(sum(x * x for x in query)) or 1.0) * (
        math.sqrt(sum(x * x for x in stored)) or 1.0
    )
    return sum(a * b for a, b in zip(query, stored, strict=True)) / norm


def _fuse(
    keyword_scores: dict[str, float],
    vector_scores: dict[str, float],
    limit: int,
    alpha: float,
    fusion: str,
    *,
    label: str,
) -> list[tuple[str, float, ScoreExplain]]:
    """Weaviate's fusion of the two sides, best first (ties by id), as `label` says in the
    explanation (both the chunk layout's hybrid and the seed layout's use it)."""
    keyword_side = _top(keyword_scores, max(limit, _CANDIDATES))
    vector_side = _top(vector_scores, max(limit, _CANDIDATES))
    if fusion == "relative":
        keyword_terms, vector_terms = _min_max(keyword_side), _min_max(vector_side)
    else:
        keyword_terms = _reciprocal_ranks(keyword_side)
        vector_terms = _reciprocal_ranks(vector_side)
    fused = []
    for object_id in set(keyword_terms) | set(vector_terms):
        keyword = keyword_terms.get(object_id)
        similar = vector_terms.get(object_id)
        keyword_part = None if keyword is None else (1 - alpha) * keyword
        vector_part = None if similar is None else alpha * similar
        explain = ScoreExplain(
            alpha=alpha,
            fusion=fusion,
            keyword=keyword,
            vector=similar,
            keyword_contribution=keyword_part,
            vector_contribution=vector_part,
            raw=(
                f"{label} {fusion}: keyword {keyword_scores.get(object_id)} -> {keyword_part}, "
                f"vector {vector_scores.get(object_id)} -> {vector_part}"
            ),
        )
        fused.append((object_id, (keyword_part or 0.0) + (vector_part or 0.0), explain))
    fused.sort(key=lambda item: (-item[1], item[0]))
    return fused[:limit]


def _entity_test(test: PathTest) -> Callable[[Entity], bool]:
    """Whether one entity a path reached matches, as Weaviate compares the property the path
    ends on (exact on field-tokenized values; `like` on each of them)."""
    field = test.path.field
    if test.op == "any":
        wanted = set(test.values)
        return lambda entity: bool(wanted.intersection(entity_values(entity, field)))
    (value,) = test.values
    if test.op == "contains":
        pattern = contains_pattern(value)
        return lambda entity: _like("text[]", entity_values(entity, field), pattern)
    if test.op == "ne":
        return lambda entity: value not in entity_values(entity, field)
    return lambda entity: value in entity_values(entity, field)


def _sort_key(record: ChunkRecord) -> float:
    date = record.metadata.get("date")
    return -date.timestamp() if date is not None else 0.0


def _like_regex(pattern: str) -> re.Pattern[str]:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), re.DOTALL)


def _like(kind: Kind, stored: Any, pattern: str) -> bool:
    if stored is None:
        return False
    if kind == "text[]":
        regex = _like_regex(pattern)
        return any(regex.fullmatch(item) for item in stored)
    if kind == "word":
        # Weaviate splits the pattern into words (keeping wildcards) and ANDs them; each must
        # match one word of the value.
        words = _WORD_RE.findall(stored.lower())
        pieces = _LIKE_TOKEN_RE.findall(pattern.lower())
        return all(any(_like_regex(piece).fullmatch(word) for word in words) for piece in pieces)
    return bool(_like_regex(pattern).fullmatch(stored))


def _equals(kind: Kind, stored: Any, value: Any) -> bool:
    if stored is None:
        return False
    if kind == "text[]":
        return value in stored
    if kind == "word":
        # Weaviate tokenizes both sides: every word of the value must occur in the property.
        words = set(_WORD_RE.findall(stored.lower()))
        wanted = _WORD_RE.findall(str(value).lower())
        return bool(wanted) and all(word in words for word in wanted)
    if kind == "uuid":
        return str(stored) == value
    return bool(stored == value)


_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
}


def _compare(stored: Any, value: Any, compare: Callable[[Any, Any], bool]) -> bool:
    if stored is None:
        return False
    if isinstance(stored, list):
        return any(compare(item, value) for item in stored)
    return compare(stored, value)


def _top(scores: dict[str, float], count: int) -> list[tuple[str, float]]:
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return ordered[:count]


def _min_max(side: list[tuple[str, float]]) -> dict[str, float]:
    """Weaviate's relative-score normalisation: 1 for the best, 0 for the worst candidate."""
    if not side:
        return {}
    values = [score for _id, score in side]
    low, high = min(values), max(values)
    if high == low:
        return {object_id: 1.0 for object_id, _score in side}
    return {object_id: (score - low) / (high - low) for object_id, score in side}


def _reciprocal_ranks(side: list[tuple[str, float]]) -> dict[str, float]:
    return {object_id: 1.0 / (rank + _RANK_OFFSET) for rank, (object_id, _s) in enumerate(side)}


def _source_condition(condition: Condition) -> Predicate:
    """A source-name condition, on `doc_id` as stitcher.store.weaviate.filters.source_filter."""
    names = source_names(condition)

    def under(properties: dict[str, Any]) -> bool:
        doc_id = str(properties.get("doc_id", ""))
        return any(doc_id == name or doc_id.startswith(name + "/") for name in names)

    return (lambda p: not under(p)) if condition.op == "ne" else under


if TYPE_CHECKING:
    # mypy checks here that the in-memory store keeps every capability of the protocol.
    _memory_is_a_chunk_store: type[ChunkStore] = MemoryStore
