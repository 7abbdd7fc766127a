"""The entities of a collection (organizations, people) and the mentions linked to them
(`EntityLinking`, `EntityCollections`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from stitcher.graph.model import Entity
from stitcher.graph.resolve import EntityLookup

if TYPE_CHECKING:
    from stitcher.store.entities import EntityView


class EntityCollections(EntityLookup, Protocol):
    """The entities (organizations, people) loaded for one chunk collection."""

    def exists(self, kind: str = ...) -> bool:
        """Whether entities of `kind` were ever loaded."""
        ...

    def entities(self, kinds: Iterable[str] = ...) -> list[Entity]:
        """Every stored entity of `kinds`."""
        ...

    def load(self, entities: Sequence[Entity]) -> object:
        """Create or update `entities` (same kind and id replaces); returns a report."""
        ...

    def show(self, name: str, kind: str | None = None) -> EntityView:
        """The one entity `name` means, its links in both directions and, where the store
        links mentions, the documents that mention it."""
        ...


class EntityLinking(Protocol):
    """The entities (organizations, people) of the collection, and mentions linked to them."""

    def entities(self) -> EntityCollections:
        """The entities (organizations, people) loaded for this collection."""
        ...

    def take_unresolved_mentions(self) -> dict[str, list[str]]:
        """Names in chunks' `mentions` that no loaded organization has, by doc_id, since the
        last call ({} for a store that does not link mentions)."""
        ...
