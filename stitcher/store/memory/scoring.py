"""Hybrid search in memory: a small BM25, cosine similarity, and the two fusions Weaviate
applies to them (relative score and ranked), with its defaults."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from stitcher.errors import UsageError
from stitcher.models import ScoreExplain

# Weaviate's defaults: BM25 parameters, candidates per hybrid side, the ranked-fusion constant.
_K1 = 1.2
_B = 0.75
_CANDIDATES = 100
_RANK_OFFSET = 60


def bm25_scores(
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


def cosine(query: Sequence[float], stored: Sequence[float]) -> float:
    if len(stored) != len(query):
        raise UsageError(f"query vector has length {len(query)}, the collection {len(stored)}")
    norm = (math.sqrt(sum(x * x for x in query)) or 1.0) * (
        math.sqrt(sum(x * x for x in stored)) or 1.0
    )
    return sum(a * b for a, b in zip(query, stored, strict=True)) / norm


def fuse(
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
