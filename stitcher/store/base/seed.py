"""What adopt and seed search need of a collection of any layout (`SeedLayoutAccess`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from stitcher.models import ScoreExplain, SeedObject

if TYPE_CHECKING:
    from stitcher.store.base import ChunkStore


class SeedLayoutAccess(Protocol):
    """What adopt and seed search need (issue 14): markers kept on the collection, sibling
    collections, and a collection of any layout's objects as stored."""

    def sibling(self, name: str) -> ChunkStore:
        """The store of collection `name` on the same server (adopt's temporary copy)."""
        ...

    def marker(self, key: str) -> dict[str, Any]:
        """The record kept under `key` on the collection itself (on Weaviate: in its
        description, next to the settings); {} when there is none."""
        ...

    def set_marker(self, key: str, record: Mapping[str, Any]) -> None:
        """Keep `record` under `key` on the collection (the settings stay as they are)."""
        ...

    def seed_objects(
        self, properties: Sequence[str] | None = None, *, vectors: bool = True
    ) -> list[SeedObject]:
        """Every object of the collection, any layout, as it is stored: `text`, `source`,
        `parent_id` and the other properties (only `properties` when given), with its vector.

        Complete or not at all: adopt deletes the original after checking its copy against it.
        """
        ...

    def seed_hybrid(
        self, query: str, vector: list[float], *, limit: int, alpha: float, fusion: str
    ) -> list[tuple[SeedObject, float, ScoreExplain | None]]:
        """Hybrid query on a seed-layout collection's own schema: BM25 over `text` as the seed
        stored it (word tokenization) and vector similarity; best first, with the scores."""
        ...

    def seed_hop(self, parent_ids: Sequence[str], child_of: Sequence[str]) -> list[SeedObject]:
        """In ONE round trip: the objects with these ids, and the objects whose `parent_id` is
        one of `child_of` (a seed-layout collection's chain, one hop each way)."""
        ...
