"""Weaviate's hybrid scoring as stitcher reads it: the fusion it asks for, and the per-side
scores it takes out of each hit's explain_score (shown by `search --explain`, used to demote
one-sided hits)."""

from __future__ import annotations

import re
from typing import Any

from stitcher.models import ScoreExplain
from stitcher.store.base import check_fusion

# weaviate is imported inside the functions that use it: importing the client costs about a
# second, which the pure tests and the in-memory store should not pay.

# Examples of Weaviate 1.38's explain_score, one line per side that found the object.
# relativeScoreFusion ("normalized score" is already weighted: alpha * normalised vector score,
# (1 - alpha) * normalised BM25 score; here alpha = 0.3):
#   "\nHybrid (Result Set keyword,bm25) Document 6f1c...: original score 0.51622593, normalized
#    score: 0.7 - \nHybrid (Result Set vector,hybridVector) Document 6f1c...: original score
#    0.9938837, normalized score: 0.3"
# rankedFusion (each side adds weight / (rank + 60), rank counted from 0):
#   "\nHybrid (Result Set vector,hybridVector) Document 6f1c... contributed 0.0050000004 to the
#    score\nHybrid (Result Set keyword,bm25) Document 6f1c... contributed 0.011666667 to the score"
_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|NaN)"
_RELATIVE_RE = re.compile(
    rf"Result Set (keyword|vector)\b[^)]*\) Document \S+?: original score {_NUMBER}, "
    rf"normalized score: {_NUMBER}"
)
_RANKED_RE = re.compile(rf"Result Set (keyword|vector)\b[^)]*\) Document \S+ contributed {_NUMBER}")


def weaviate_fusion(fusion: str) -> Any:
    """The client's HybridFusion for one of stitcher.store.base.FUSIONS (UsageError else)."""
    from weaviate.classes.query import HybridFusion

    check_fusion(fusion)
    return HybridFusion.RELATIVE_SCORE if fusion == "relative" else HybridFusion.RANKED


def parse_explain(raw: str, alpha: float, fusion: str) -> ScoreExplain:
    """Per-side scores from Weaviate's explain_score string (formats in the comment above).

    Relative fusion: `keyword`/`vector` are the min-max normalised side scores (0..1) and the
    contributions are (1 - alpha) * keyword and alpha * vector. Ranked fusion: `keyword`/`vector`
    are the reciprocal-rank terms 1 / (rank + 60), contributions the weighted terms. A side that
    did not find the object is None.
    """
    weights = {"keyword": 1.0 - alpha, "vector": alpha}
    contributions: dict[str, float] = {}
    if fusion == "ranked":
        for side, number in _RANKED_RE.findall(raw):
            contributions[side] = float(number)
    else:
        for side, _original, number in _RELATIVE_RE.findall(raw):
            contributions[side] = float(number)

    def side_score(side: str) -> float | None:
        if side not in contributions or weights[side] <= 0:
            return None
        return contributions[side] / weights[side]

    return ScoreExplain(
        alpha=alpha,
        fusion=fusion,
        keyword=side_score("keyword"),
        vector=side_score("vector"),
        keyword_contribution=contributions.get("keyword"),
        vector_contribution=contributions.get("vector"),
        raw=raw,
    )
