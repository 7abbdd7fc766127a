"""The entities of one in-memory collection: what its graph conditions look up."""

from __future__ import annotations

from collections.abc import Iterable

from stitcher.graph.model import KINDS, MENTIONED_KIND, Entity
from stitcher.graph.resolve import Resolver
from stitcher.store.entities import EntityView, entity_links, find_entity


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
