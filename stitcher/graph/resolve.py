"""Names → entities: exact resolution for mentions, forgiving lookup for --org.

Mentions are resolved strictly (a name or alias, compared by `name_key`), because a wrong link
silently changes every filter that follows it. A user typing `--org` gets a forgiving lookup
(substrings, small typos) and, when several entities fit, the list to choose from.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Protocol

# The errors live in stitcher.errors; imported here as they always were.
from stitcher.errors import AmbiguousEntity as AmbiguousEntity
from stitcher.errors import UnknownEntity as UnknownEntity
from stitcher.graph.model import Entity, name_key

#: How similar (difflib ratio) a typed name must be to a name key to count as a typo of it.
TYPO_CUTOFF = 0.8
#: Candidates shown in an ambiguity message.
_SHOWN = 10


class Resolver:
    """Entities of one kind, looked up by name and alias.

    Args:
        entities: Entities of any kinds; only those of `kind` are used.
        kind: "organization" or "person".
    """

    def __init__(self, entities: Iterable[Entity], kind: str = "organization") -> None:
        self.kind = kind
        self._owners: dict[str, dict[str, Entity]] = {}
        for entity in entities:
            if entity.kind != kind:
                continue
            for key in entity.keys:
                self._owners.setdefault(key, {})[entity.id] = entity

    def __len__(self) -> int:
        return len({e.id for owners in self._owners.values() for e in owners.values()})

    def resolve(self, name: str) -> Entity | None:
        """The one entity whose name or an alias is `name`; None when none or several are."""
        owners = self._owners.get(name_key(name), {})
        return next(iter(owners.values())) if len(owners) == 1 else None

    def candidates(self, query: str) -> list[Entity]:
        """Entities `query` may mean, best guess first.

        An exact name or alias wins outright; otherwise every entity with a name or alias that
        contains the query, or that the query misspells slightly.
        """
        key = name_key(query)
        if not key:
            return []
        exact = self._owners.get(key)
        if exact:
            return _sorted(exact.values())
        found: dict[str, Entity] = {}
        for known, owners in self._owners.items():
            if key in known:
                found.update(owners)
        for known in difflib.get_close_matches(key, list(self._owners), n=20, cutoff=TYPO_CUTOFF):
            found.update(self._owners[known])
        return _sorted(found.values())

    def one(self, query: str, where: str = "") -> Entity:
        """The single entity `query` means.

        Args:
            query: A name, alias, part of one, or a slight misspelling.
            where: Where the entities come from, for messages (e.g. "collection 'News'").

        Raises:
            AmbiguousEntity: Several fit; the message lists them so the user can choose.
            UnknownEntity: None fits.
        """
        found = self.candidates(query)
        source = f" in {where}" if where else ""
        if len(found) == 1:
            return found[0]
        if not found:
            hint = (
                "load some with `stitcher entities load FILE`"
                if not self._owners
                else "check the spelling, or list them with `stitcher entities list`"
            )
            raise UnknownEntity(f"no {self.kind} named {query!r}{source}; {hint}")
        shown = [entity.label() for entity in found[:_SHOWN]]
        more = f" and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
        raise AmbiguousEntity(
            f"{self.kind} {query!r} is ambiguous{source}: it may mean "
            + "; ".join(shown)
            + more
            + ". Give the full name of one of them.",
            [entity.name for entity in found],
        )


def _sorted(entities: Iterable[Entity]) -> list[Entity]:
    return sorted(entities, key=lambda e: (name_key(e.name), e.id))


class EntityLookup(Protocol):
    """The entities of one chunk collection, as the conditions read them.

    `stitcher.store.weaviate.entities.EntityStore` (Weaviate) and
    `stitcher.store.memory.MemoryEntities` have it; a store hands one out through
    `ChunkStore.entities()`.
    """

    @property
    def collection(self) -> str:
        """The canonical name of the chunk collection the entities belong to."""
        ...

    def resolver(self, kind: str = ...) -> Resolver:
        """Name and alias lookup over the stored entities of `kind`."""
        ...
