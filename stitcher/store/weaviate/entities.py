"""Entities in Weaviate: one collection per kind next to each chunk collection, references
between them, and the `mentions_ref` references from chunks to organizations.

Layout of an entity object (collection "<Chunks>_Organization" or "<Chunks>_Person"):
`entity_id`, `name`, `aliases`, `name_keys` (name_key of name and aliases: what filters and
mentions match), each attribute twice (`country` as written, `country_key` for matching), the
declared links as raw ids (`supplier_of_ids`: kept even while the target is not loaded), other
columns as JSON in `extra`, `entity_hash` (skip unchanged objects on reload), and one reference
property per link direction (see stitcher.graph.model.references_of).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stitcher.errors import WriteFailed
from stitcher.graph.model import (
    KINDS,
    MENTIONED_KIND,
    Entity,
    ambiguous_keys,
    build_graph,
    content_hash,
    declared_links,
    entity_collection,
    entity_uuid,
    name_key,
    references_of,
)
from stitcher.graph.paths import (
    ID_PROPERTY,
    MENTIONS,
    MENTIONS_REF,
    NAME_KEYS_PROPERTY,
    attribute_key_property,
)
from stitcher.graph.resolve import Resolver
from stitcher.ids import canonical_collection_name
from stitcher.store.entities import EntityView, LoadReport, RelinkReport, entity_links, find_entity
from stitcher.store.schema import property_name

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate
    from weaviate.collections.classes.config import Property

_BATCH = 200
_HASH_PROPERTY = "entity_hash"
#: Chunks one filtered query lists (Weaviate's default QUERY_MAXIMUM_RESULTS).
_LINK_SCAN_LIMIT = 10_000


class EntityStore:
    """The entity collections of one chunk collection.

    The entities of a multi-tenant collection are shared by its tenants (an organization is the
    same in every knowledge base; Weaviate lets a tenant's chunks reference a single-tenant
    collection); what a tenant changes is which of its own chunks mention them.

    Args:
        client: A connected `weaviate.WeaviateClient`.
        collection: The chunk collection the entities belong to.
        tenant: The tenant whose chunks `relink` and `show` read; None reads a single-tenant
            collection, or every active tenant of a multi-tenant one.
    """

    def __init__(
        self, client: weaviate.WeaviateClient, collection: str, tenant: str | None = None
    ) -> None:
        self._client = client
        self.collection = canonical_collection_name(collection)
        self.tenant = tenant

    def collection_of(self, kind: str) -> str:
        """Name of the collection holding entities of `kind`."""
        return entity_collection(self.collection, kind)

    def exists(self, kind: str = MENTIONED_KIND) -> bool:
        """Whether entities of `kind` were ever loaded for this chunk collection."""
        return bool(self._client.collections.exists(self.collection_of(kind)))

    # -- schema --------------------------------------------------------------------------

    def ensure_schema(self) -> None:
        """Create missing entity collections, then the references between them."""
        from weaviate.classes.config import Configure, ReferenceProperty

        for kind in KINDS:
            name = self.collection_of(kind)
            if not self._client.collections.exists(name):
                self._client.collections.create(
                    name,
                    description=f"stitcher entities ({kind}) of collection {self.collection}",
                    properties=_entity_properties(kind),
                    vector_config=Configure.Vectors.self_provided(),
                )
        for kind in KINDS:
            collection = self._client.collections.use(self.collection_of(kind))
            present = {ref.name for ref in collection.config.get().references}
            for ref_name, target in references_of(kind).items():
                if ref_name not in present:
                    target_name = self.collection_of(target)
                    collection.config.add_reference(
                        ReferenceProperty(name=ref_name, target_collection=target_name)
                    )

    # -- reading -------------------------------------------------------------------------

    def entities(self, kinds: Iterable[str] = tuple(KINDS)) -> list[Entity]:
        """Every stored entity of `kinds` (walks the collections)."""
        return [entity for entity, _hash in self._stored(kinds)]

    def _stored(self, kinds: Iterable[str]) -> list[tuple[Entity, str | None]]:
        found = []
        for kind in kinds:
            name = self.collection_of(kind)
            if not self._client.collections.exists(name):
                continue
            for obj in self._client.collections.use(name).iterator(include_vector=False):
                found.append((_entity_from_properties(kind, obj.properties), _hash_of(obj)))
        return found

    def resolver(self, kind: str = MENTIONED_KIND) -> Resolver:
        """Name and alias lookup over the stored entities of `kind`."""
        return Resolver(self.entities([kind]), kind)

    def find(self, name: str, kind: str | None = None) -> Entity:
        """The one entity `name` means (forgiving: aliases, parts, small typos).

        Raises:
            AmbiguousEntity: Several fit (the message lists them).
            UnknownEntity: None fits.
        """
        entities = self.entities([kind] if kind else list(KINDS))
        return find_entity(entities, name, f"collection {self.collection!r}")

    def show(self, name: str, kind: str | None = None) -> EntityView:
        """An entity, its links in both directions, and the documents that mention it."""
        entity = self.find(name, kind)
        links = entity_links(self.entities(), entity)
        if entity.kind != MENTIONED_KIND:
            return EntityView(entity, links)
        shards = self._chunk_shards(references=True)
        if shards is None:
            return EntityView(entity, links)
        mentioned = {
            tenant: self._mentioning_documents(chunks, entity) for tenant, chunks in shards.active
        }
        if shards.multi_tenant and self.tenant is None:
            by_tenant = {str(tenant): docs for tenant, docs in mentioned.items()}
            return EntityView(entity, links, mentioned_by_tenant=by_tenant)
        return EntityView(entity, links, next(iter(mentioned.values()), []))

    def _chunk_shards(self, *, references: bool = False, mentions: bool = False) -> _Shards | None:
        """The chunk collection's handles to read: itself, this store's tenant, or each active
        tenant. None when the collection does not exist, or lacks the mention references
        (`references`) or the raw mentions property (`mentions`)."""
        if not self._client.collections.exists(self.collection):
            return None
        whole = self._client.collections.use(self.collection)
        config = whole.config.get()
        if references and MENTIONS_REF not in {ref.name for ref in config.references}:
            return None
        if mentions and property_name(MENTIONS) not in {prop.name for prop in config.properties}:
            return None
        if not config.multi_tenancy_config.enabled:
            return _Shards(False, [(None, whole)], [])
        if self.tenant is not None:
            return _Shards(True, [(self.tenant, whole.with_tenant(self.tenant))], [])
        active: list[tuple[str | None, Any]] = []
        inactive: list[str] = []
        for name, tenant in sorted(whole.tenants.get().items()):
            if _is_active(tenant.activity_status):
                active.append((name, whole.with_tenant(name)))
            else:
                inactive.append(name)
        return _Shards(True, active, inactive)

    def _mentioning_documents(self, chunks: Any, entity: Entity) -> list[str]:
        from weaviate.classes.query import Filter

        result = chunks.query.fetch_objects(
            filters=Filter.by_ref(MENTIONS_REF)
            .by_id()
            .equal(entity_uuid(self.collection, entity.kind, entity.id))
            & Filter.by_property("chunk_index").equal(0),
            return_properties=["doc_id"],
            limit=10_000,
        )
        return sorted({str(obj.properties["doc_id"]) for obj in result.objects})

    # -- writing -------------------------------------------------------------------------

    def load(self, entities: Sequence[Entity], *, relink: bool = True) -> LoadReport:
        """Create or update `entities` and every reference the graph implies.

        Entities already stored and absent from `entities` stay. Objects whose content (own
        data and references) did not change are not written, so loading the same file twice
        writes nothing. With `relink`, the mentions of the chunk collection are resolved again
        against the new names (an alias added or renamed takes effect on stored chunks).

        Raises:
            WriteFailed: The server refused some objects (the message has its reason).
        """
        report = LoadReport(collection=self.collection, read=len(entities))
        self.ensure_schema()
        stored = {(e.kind, e.id): (e, h) for e, h in self._stored(KINDS)}
        merged = {key: entity for key, (entity, _h) in stored.items()}
        merged.update({(e.kind, e.id): e for e in entities})
        graph = build_graph(merged.values())
        report.dangling = list(graph.dangling)
        report.ambiguous = {
            key: [e.name for e in owners]
            for key, owners in ambiguous_keys(merged.values(), MENTIONED_KIND).items()
        }

        fresh: list[tuple[str, Entity]] = []
        changed: list[tuple[str, Entity, dict[str, list[str]], str]] = []
        for key, entity in sorted(merged.items()):
            refs = graph.references[key]
            digest = content_hash(entity, refs)
            previous = stored.get(key)
            if previous is not None and previous[1] == digest:
                report.unchanged += 1
                continue
            object_refs = {
                name: [entity_uuid(self.collection, kind, i) for kind, i in targets]
                for name, targets in refs.items()
                if targets
            }
            changed.append((entity.kind, entity, object_refs, digest))
            if previous is None:
                fresh.append((entity.kind, entity))
                report.created.append(f"{entity.kind}:{entity.id}")
            else:
                report.updated.append(f"{entity.kind}:{entity.id}")
        # References must point at objects that exist: new objects go in bare first.
        self._write([(kind, entity, {}, None) for kind, entity in fresh])
        self._write(changed)
        if relink:
            report.relink = self.relink()
        return report

    def _write(self, items: Sequence[tuple[str, Entity, dict[str, list[str]], str | None]]) -> None:
        from weaviate.classes.data import DataObject

        by_kind: dict[str, list[Any]] = {}
        for kind, entity, refs, digest in items:
            properties = _entity_to_properties(entity)
            if digest is not None:
                properties[_HASH_PROPERTY] = digest
            by_kind.setdefault(kind, []).append(
                DataObject(
                    properties=properties,
                    uuid=entity_uuid(self.collection, kind, entity.id),
                    references=refs or None,
                )
            )
        for kind, objects in by_kind.items():
            collection = self._client.collections.use(self.collection_of(kind))
            for begin in range(0, len(objects), _BATCH):
                result = collection.data.insert_many(objects[begin : begin + _BATCH])
                if result.errors:
                    first = next(iter(result.errors.values()))
                    raise WriteFailed(
                        f"{len(result.errors)} {kind} entities of {self.collection!r} were not "
                        f"stored: {first.message}; fix the file and load it again"
                    )

    # -- mentions --------------------------------------------------------------------------

    def relink(self) -> RelinkReport | None:
        """Resolve the raw `mentions` of every stored chunk again and fix its references: of
        this store's tenant, or of every active tenant of a multi-tenant collection.

        Returns None when the chunk collection does not exist or holds no mentions.
        """
        report = RelinkReport()
        shards = self._chunk_shards(mentions=True)
        if shards is None:
            return None
        linker = MentionLinker(self._client, self.collection)
        if not linker.prepare():
            return None
        if shards.multi_tenant:
            report.tenants = [str(tenant) for tenant, _chunks in shards.active]
            report.inactive_tenants = shards.inactive
        for tenant, chunks in shards.active:
            self._relink_shard(chunks, linker, report, tenant)
        return report

    def _relink_shard(
        self, chunks: Any, linker: MentionLinker, report: RelinkReport, tenant: str | None
    ) -> None:
        from weaviate.classes.query import QueryReference

        raw = property_name(MENTIONS)
        # A tenant's chunks cannot return their references to the (single-tenant) entity
        # collections: Weaviate then looks the targets up with the tenant and fails (weaviate
        # issue #7281, still open in 1.38). Filtering on them works, so a tenant's current links
        # are read organization by organization instead.
        current_of = None if tenant is None else self._links_by_filter(chunks)
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

    def _links_by_filter(self, chunks: Any) -> _Links:
        """chunk id -> sorted ids of the organizations it references, one filtered query per
        organization; `complete` is False when an organization had more chunks than one query
        returns (the caller then rewrites every chunk's links)."""
        from weaviate.classes.query import Filter

        links = _Links()
        for entity in self.entities([MENTIONED_KIND]):
            target = entity_uuid(self.collection, MENTIONED_KIND, entity.id)
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


class MentionLinker:
    """Resolves the names a document mentions to organization object ids, for chunk writes.

    Loads the organizations once; `prepare` also adds the `mentions_ref` reference property to
    the chunk collection when it is missing.
    """

    def __init__(self, client: weaviate.WeaviateClient, collection: str) -> None:
        self._entities = EntityStore(client, collection)
        self._client = client
        self._resolver: Resolver | None = None
        self._ready: bool | None = None

    def prepare(self) -> bool:
        """Whether mentions can be linked (organizations are loaded for this collection)."""
        from weaviate.classes.config import ReferenceProperty

        if self._ready is None:
            self._ready = self._entities.exists(MENTIONED_KIND)
            if self._ready:
                self._resolver = self._entities.resolver(MENTIONED_KIND)
                chunks = self._client.collections.use(self._entities.collection)
                if MENTIONS_REF not in {ref.name for ref in chunks.config.get().references}:
                    chunks.config.add_reference(
                        ReferenceProperty(
                            name=MENTIONS_REF,
                            target_collection=self._entities.collection_of(MENTIONED_KIND),
                        )
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
                ids.add(entity_uuid(self._entities.collection, entity.kind, entity.id))
        return sorted(ids), list(dict.fromkeys(unresolved))


@dataclass(frozen=True)
class _Shards:
    """Where a collection's chunks are read: (tenant or None, handle) pairs."""

    multi_tenant: bool
    active: list[tuple[str | None, Any]]
    inactive: list[str]


def _is_active(status: Any) -> bool:
    # The client spells ACTIVE as HOT in some versions (see store.weaviate.tenants._status_name).
    return str(getattr(status, "value", status)).upper() in ("ACTIVE", "HOT")


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(item) for item in value]


def _hash_of(obj: Any) -> str | None:
    value = obj.properties.get(_HASH_PROPERTY)
    return str(value) if value else None


def _entity_to_properties(entity: Entity) -> dict[str, Any]:
    properties: dict[str, Any] = {
        ID_PROPERTY: entity.id,
        "name": entity.name,
        "aliases": list(entity.aliases),
        NAME_KEYS_PROPERTY: list(entity.keys),
    }
    for attribute in KINDS[entity.kind].attributes:
        value = entity.attributes.get(attribute)
        if value:
            properties[attribute] = value
            properties[attribute_key_property(attribute)] = name_key(value)
    for link in declared_links(entity.kind):
        properties[f"{link}_ids"] = list(entity.links.get(link, ()))
    properties["extra"] = json.dumps(dict(entity.extra), ensure_ascii=False, sort_keys=True)
    return properties


def _entity_from_properties(kind: str, properties: Mapping[str, Any]) -> Entity:
    attributes = {a: str(properties[a]) for a in KINDS[kind].attributes if properties.get(a)}
    links = {
        link: tuple(properties[f"{link}_ids"])
        for link in declared_links(kind)
        if properties.get(f"{link}_ids")
    }
    try:
        extra = json.loads(properties.get("extra") or "{}")
    except ValueError:
        extra = {}
    return Entity(
        kind=kind,
        id=str(properties[ID_PROPERTY]),
        name=str(properties["name"]),
        aliases=tuple(properties.get("aliases") or ()),
        attributes=attributes,
        links=links,
        extra=extra if isinstance(extra, dict) else {},
    )


def _entity_properties(kind: str) -> list[Property]:
    from weaviate.classes.config import DataType, Property, Tokenization

    def exact(name: str, data_type: DataType = DataType.TEXT) -> Property:
        return Property(
            name=name,
            data_type=data_type,
            tokenization=Tokenization.FIELD,
            index_filterable=True,
            index_searchable=False,
        )

    properties = [
        exact(ID_PROPERTY),
        Property(name="name", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
        exact("aliases", DataType.TEXT_ARRAY),
        exact(NAME_KEYS_PROPERTY, DataType.TEXT_ARRAY),
        exact(_HASH_PROPERTY),
        Property(
            name="extra",
            data_type=DataType.TEXT,
            index_filterable=False,
            index_searchable=False,
        ),
    ]
    for attribute in KINDS[kind].attributes:
        properties.append(
            Property(name=attribute, data_type=DataType.TEXT, tokenization=Tokenization.WORD)
        )
        properties.append(exact(attribute_key_property(attribute)))
    for link in declared_links(kind):
        properties.append(exact(f"{link}_ids", DataType.TEXT_ARRAY))
    return properties
