"""Which layout a collection has, and what adopt and seed search read and write on one of any
layout: markers in its description, sibling collections, and a seed-layout collection's objects,
hybrid query and chain hops (helpers in stitcher.store.weaviate.seed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stitcher.models import ScoreExplain, SeedObject
from stitcher.store.base import Layout
from stitcher.store.weaviate.listing import Listings
from stitcher.store.weaviate.scores import parse_explain, weaviate_fusion
from stitcher.store.weaviate.seed import (
    MAX_HOP_FETCH,
    SEED_PARENT,
    SEED_TEXT,
    detect_layout,
    to_seed_object,
)

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    from weaviate.collections import Collection


class Layouts(Listings):
    """What adopt and seed search need (issue 14): the layout, markers, the seed's objects.

    Plain handles, as adopt and seed search used before they went through the store: no retries
    and the client's default consistency (QUORUM, the store's default too). A sibling is another
    collection, so it has no tenant; objects are read from this store's tenant.
    """

    def layout(self) -> Layout:
        """Which layout the collection has: "stitcher", "seed" or "unknown" (see `detect_layout`).

        Raises:
            CollectionMissing: The collection does not exist.
        """
        return detect_layout(self._client, self._name)

    @property
    def _plain(self) -> Collection[Any, Any]:
        handle = self._client.collections.use(self._name)
        return handle if self._tenant is None else handle.with_tenant(self._tenant)

    def marker(self, key: str) -> dict[str, Any]:
        """The record under `key` in the collection's description; {} when there is none."""
        description = self._client.collections.use(self._name).config.get().description
        try:
            marker = json.loads(description or "{}").get(key)
        except (ValueError, AttributeError):
            return {}
        return marker if isinstance(marker, dict) else {}

    def set_marker(self, key: str, record: Mapping[str, Any]) -> None:
        """Put `record` under `key` in the collection's description, next to the settings."""
        handle = self._client.collections.use(self._name)
        payload = json.loads(handle.config.get().description or "{}")
        payload[key] = dict(record)
        handle.config.update(description=json.dumps(payload, sort_keys=True))

    def seed_objects(
        self, properties: Sequence[str] | None = None, *, vectors: bool = True
    ) -> list[SeedObject]:
        """Every object as stored, walked with the cursor and checked against every replica's
        count (`listed_whole`: a cursor lists one replica's copy)."""
        handle = self._plain
        wanted = None if properties is None else list(properties)

        def listing(_count: int) -> tuple[list[SeedObject], int]:
            found = [
                to_seed_object(obj, with_vector=vectors)
                for obj in handle.iterator(
                    include_vector=vectors, return_properties=wanted, cache_size=1000
                )
            ]
            return found, len(found)

        return self.listed_whole(f"reading {self._name}", listing)

    def seed_hybrid(
        self, query: str, vector: list[float], *, limit: int, alpha: float, fusion: str
    ) -> list[tuple[SeedObject, float, ScoreExplain | None]]:
        """Hybrid query on the seed's schema: BM25 on its word-tokenized `text`."""
        from weaviate.classes.query import MetadataQuery

        result = self._plain.query.hybrid(
            query=query,
            vector=vector,
            alpha=alpha,
            fusion_type=weaviate_fusion(fusion),
            query_properties=[SEED_TEXT],
            limit=limit,
            return_metadata=MetadataQuery(score=True, explain_score=True),
        )
        return [
            (
                to_seed_object(obj),
                float(obj.metadata.score or 0.0),
                parse_explain(obj.metadata.explain_score or "", alpha, fusion),
            )
            for obj in result.objects
        ]

    def seed_hop(self, parent_ids: Sequence[str], child_of: Sequence[str]) -> list[SeedObject]:
        """One fetch: objects by id, or whose `parent_id` is one of `child_of`."""
        from weaviate.classes.query import Filter

        clauses = []
        if parent_ids:
            clauses.append(Filter.by_id().contains_any(list(parent_ids)))
        if child_of:
            # parent_id is word-tokenized text in the seed's auto-schema: the caller checks the
            # match exactly (seed_search.Neighbourhood.add_hop); the limit leaves room for
            # chance matches.
            clauses.append(Filter.by_property(SEED_PARENT).contains_any(list(child_of)))
        if not clauses:
            return []
        result = self._plain.query.fetch_objects(
            filters=clauses[0] if len(clauses) == 1 else Filter.any_of(clauses),
            limit=min(MAX_HOP_FETCH, 2 * (len(parent_ids) + len(child_of)) + 10),
        )
        return [to_seed_object(obj) for obj in result.objects]
