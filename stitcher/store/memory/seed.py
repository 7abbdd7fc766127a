"""What adopt and seed search read and write on an in-memory collection of any layout:
markers, and a seed-layout collection's objects, hybrid query and chain hops."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from stitcher.models import ScoreExplain, SeedObject
from stitcher.store.base import check_fusion
from stitcher.store.memory.core import MemoryCore
from stitcher.store.memory.filters import WORD_RE
from stitcher.store.memory.scoring import bm25_scores, cosine, fuse


class MemorySeedLayout(MemoryCore):
    """Markers and the seed layout's objects (issue 14); `load_seed` and `sibling`, which make
    and find whole collections on the server, are MemoryStore's."""

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
        tokens = {i: WORD_RE.findall(obj.text.lower()) for i, obj in self._seed.items()}
        query_tokens = WORD_RE.findall(query.lower())
        keyword = bm25_scores(tokens, query_tokens) if alpha < 1 else {}
        similar = {}
        if alpha > 0:
            for object_id, obj in self._seed.items():
                similar[object_id] = cosine(vector, obj.vector or [])
        fused = fuse(keyword, similar, limit, alpha, fusion, label="memory seed")
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
