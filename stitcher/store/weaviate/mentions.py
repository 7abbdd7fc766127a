"""Links from chunks to the organizations they mention: the `mentions_ref` references a chunk
write adds (`MentionLinker`), and `relink`, which resolves the raw `mentions` of every stored
chunk again after the organizations changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stitcher.graph.model import MENTIONED_KIND, Entity, entity_collection, entity_uuid
from stitcher.graph.paths import MENTIONS, MENTIONS_REF
from stitcher.graph.resolve import Resolver
from stitcher.ids import canonical_collection_name
from stitcher.store.entities import RelinkReport
from stitcher.store.schema import property_name
from stitcher.store.weaviate.entity_objects import stored_entities

# weaviate itself is imported inside the functions that use it: importing the client costs
# about a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate

#: Chunks one filtered query lists (Weaviate's default QUERY_MAXIMUM_RESULTS).
_LINK_SCAN_LIMIT = 10_000


class MentionLinker:
    """Resolves the names a document mentions to organization object ids, for chunk writes.

    Loads the organizations once; `prepare` also adds the `mentions_ref` reference property to
    the chunk collection when it is missing.
    """

    def __init__(self, client: weaviate.WeaviateClient, collection: str) -> None:
        self._client = client
        self._collection = canonical_collection_name(collection)
        self._resolver: Resolver | None = None
        self._ready: bool | None = None

    def prepare(self) -> bool:
        """Whether mentions can be linked (organizations are loaded for this collection)."""
        from weaviate.classes.config import ReferenceProperty

        if self._ready is None:
            organizations = entity_collection(self._collection, MENTIONED_KIND)
            self._ready = bool(self._client.collections.exists(organizations))
            if self._ready:
                loaded = stored_entities(self._client, self._collection, [MENTIONED_KIND])
                self._resolver = Resolver([entity for entity, _hash in loaded], MENTIONED_KIND)
                chunks = self._client.collections.use(self._collection)
                if MENTIONS_REF not in {ref.name for ref in chunks.config.get().references}:
                    chunks.config.add_reference(
                        ReferenceProperty(name=MENTIONS_REF, target_collection=organizations)
                    )
        return self._ready

    def link(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """Sorted object ids of the organizations `names` resolve to, and the names that did
        not resolve (unknown, or shared by several organizations)."""
        if not self.prepare() or self._resolver is None:
            return [], list(dict.fromkeys(names))
        ids: set[str] = set()
        unresolved: list[str] = []
        for name in names:
            entity = self._resolver.resolve(name)
            if entity is None:
                unresolved.append(name)
            else:
                ids.add(entity_uuid(self._collection, entity.kind, entity.id))
        return sorted(ids), list(dict.fromkeys(unresolved))


@dataclass(frozen=True)
class Shards:
    """Where a collection's chunks are read: (tenant or None, handle) pairs."""

    multi_tenant: bool
    active: list[tuple[str | None, Any]]
    inactive: list[str]


def chunk_shards(
    client: weaviate.WeaviateClient,
    collection: str,
    tenant: str | None,
    *,
    references: bool = False,
    mentions: bool = False,
) -> Shards | None:
    """The chunk collection's handles to read: itself, its tenant `tenant`, or (None) each
    active tenant. None when the collection does not exist, or lacks the mention references
    (`references`) or the raw mentions property (`mentions`)."""
    if not client.collections.exists(collection):
        return None
    whole = client.collections.use(collection)
    config = whole.config.get()
    if references and MENTIONS_REF not in {ref.name for ref in config.references}:
        return None
    if mentions and property_name(MENTIONS) not in {prop.name for prop in config.properties}:
        return None
    if not config.multi_tenancy_config.enabled:
        return Shards(False, [(None, whole)], [])
    if tenant is not None:
        return Shards(True, [(tenant, whole.with_tenant(tenant))], [])
    active: list[tuple[str | None, Any]] = []
    inactive: list[str] = []
    for name, found in sorted(whole.tenants.get().items()):
        if _is_active(found.activity_status):
            active.append((name, whole.with_tenant(name)))
        else:
            inactive.append(name)
    return Shards(True, active, inactive)


def mentioning_documents(chunks: Any, collection: str, entity: Entity) -> list[str]:
    """The documents among `chunks` that mention `entity` (linked by `mentions_ref`)."""
    from weaviate.classes.query import Filter

    result = chunks.query.fetch_objects(
        filters=Filter.by_ref(MENTIONS_REF)
        .by_id()
        .equal(entity_uuid(collection, entity.kind, entity.id))
        & Filter.by_property("chunk_index").equal(0),
        return_properties=["doc_id"],
        limit=10_000,
    )
    return sorted({str(obj.properties["doc_id"]) for obj in result.objects})


def relink(
    client: weaviate.WeaviateClient, collection: str, tenant: str | None
) -> RelinkReport | None:
    """Resolve the raw `mentions` of every stored chunk of `collection` again and fix its
    references: of its tenant `tenant`, or (None) of every active tenant of a multi-tenant
    collection.

    Returns None when the chunk collection does not exist or holds no mentions.
    """
    report = RelinkReport()
    shards = chunk_shards(client, collection, tenant, mentions=True)
    if shards is None:
        return None
    linker = MentionLinker(client, collection)
    if not linker.prepare():
        return None
    if shards.multi_tenant:
        report.tenants = [str(name) for name, _chunks in shards.active]
        report.inactive_tenants = shards.inactive
    for name, chunks in shards.active:
        _relink_shard(client, collection, chunks, linker, report, name)
    return report


def _relink_shard(
    client: weaviate.WeaviateClient,
    collection: str,
    chunks: Any,
    linker: MentionLinker,
    report: RelinkReport,
    tenant: str | None,
) -> None:
    from weaviate.classes.query import QueryReference

    raw = property_name(MENTIONS)
    # A tenant's chunks cannot return their references to the (single-tenant) entity
    # collections: Weaviate then looks the targets up with the tenant and fails (weaviate
    # issue #7281, still open in 1.38). Filtering on them works, so a tenant's current links
    # are read organization by organization instead.
    current_of = None if tenant is None else _links_by_filter(client, collection, chunks)
    for obj in chunks.iterator(
        return_properties=[raw, "doc_id"],
        return_references=None
        if tenant is not None
        else QueryReference(link_on=MENTIONS_REF, return_properties=[]),
    ):
        report.chunks_checked += 1
        names = _names(obj.properties.get(raw))
        wanted, unresolved = linker.link(names)
        if unresolved:
            docs = report.unresolved.setdefault(tenant, {})
            doc = docs.setdefault(str(obj.properties.get("doc_id")), [])
            doc.extend(n for n in unresolved if n not in doc)
        if current_of is not None:
            # None: some organization has too many chunks to list; rewrite to be sure.
            current = current_of.get(str(obj.uuid), []) if current_of.complete else None
        else:
            reference = (obj.references or {}).get(MENTIONS_REF)
            current = sorted(str(o.uuid) for o in reference.objects) if reference else []
        if current != wanted:
            chunks.data.reference_replace(obj.uuid, MENTIONS_REF, wanted)
            report.chunks_changed += 1


def _links_by_filter(client: weaviate.WeaviateClient, collection: str, chunks: Any) -> _Links:
    """chunk id -> sorted ids of the organizations it references, one filtered query per
    organization; `complete` is False when an organization had more chunks than one query
    returns (the caller then rewrites every chunk's links)."""
    from weaviate.classes.query import Filter

    links = _Links()
    for entity, _hash in stored_entities(client, collection, [MENTIONED_KIND]):
        target = entity_uuid(collection, MENTIONED_KIND, entity.id)
        result = chunks.query.fetch_objects(
            filters=Filter.by_ref(MENTIONS_REF).by_id().equal(target),
            return_properties=[],
            limit=_LINK_SCAN_LIMIT,
        )
        if len(result.objects) >= _LINK_SCAN_LIMIT:
            links.complete = False
        for obj in result.objects:
            links.setdefault(str(obj.uuid), []).append(target)
    for targets in links.values():
        targets.sort()
    return links


class _Links(dict[str, list[str]]):
    complete: bool = True


def _is_active(status: Any) -> bool:
    # The client spells ACTIVE as HOT in some versions (see store.weaviate.tenants._status_name).
    return str(getattr(status, "value", status)).upper() in ("ACTIVE", "HOT")


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(item) for item in value]
