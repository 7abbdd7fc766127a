"""The entities of a chunk collection in Weaviate (`EntityStore`): their collections' schema and
the references between them, reading and finding them, loading a file of them, and showing one
with the documents that mention it.

How an entity is stored: stitcher.store.weaviate.entity_objects; the links from chunks to the
organizations they mention: stitcher.store.weaviate.mentions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from stitcher.errors import WriteFailed
from stitcher.graph.model import (
    KINDS,
    MENTIONED_KIND,
    Entity,
    ambiguous_keys,
    build_graph,
    content_hash,
    entity_collection,
    entity_uuid,
    references_of,
)
from stitcher.graph.resolve import Resolver
from stitcher.ids import canonical_collection_name
from stitcher.store.entities import EntityView, LoadReport, RelinkReport, entity_links, find_entity
from stitcher.store.weaviate import mentions
from stitcher.store.weaviate.entity_objects import (
    HASH_PROPERTY,
    entity_properties,
    entity_to_properties,
    stored_entities,
)
from stitcher.store.weaviate.mentions import MentionLinker

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate

__all__ = ["EntityStore", "MentionLinker"]

_BATCH = 200


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
                    properties=entity_properties(kind),
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
        return stored_entities(self._client, self.collection, kinds)

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
        shards = mentions.chunk_shards(self._client, self.collection, self.tenant, references=True)
        if shards is None:
            return EntityView(entity, links)
        mentioned = {
            tenant: mentions.mentioning_documents(chunks, self.collection, entity)
            for tenant, chunks in shards.active
        }
        if shards.multi_tenant and self.tenant is None:
            by_tenant = {str(tenant): docs for tenant, docs in mentioned.items()}
            return EntityView(entity, links, mentioned_by_tenant=by_tenant)
        return EntityView(entity, links, next(iter(mentioned.values()), []))

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
            properties = entity_to_properties(entity)
            if digest is not None:
                properties[HASH_PROPERTY] = digest
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
        return mentions.relink(self._client, self.collection, self.tenant)
