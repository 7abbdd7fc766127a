"""What every store shares, whatever its capabilities: how a collection is laid out, the fusion
methods of a hybrid query, and how a store names what it holds in messages."""

from __future__ import annotations

from typing import Literal

from stitcher.errors import UsageError

#: How a collection is laid out: stitcher's own (settings recorded), seed 003's LangChain
#: layout (`text` + `parent_id`, see stitcher.seed_layout), or anything else.
Layout = Literal["stitcher", "seed", "unknown"]

#: How `hybrid` fuses its two sides: Weaviate's relativeScoreFusion or rankedFusion.
FUSIONS = ("relative", "ranked")


def scope_of(name: str, tenant: str | None) -> str:
    """What a store bound to `name` (and `tenant`) holds, for messages: "'Docs'" or
    "tenant 'kb1' of 'Docs'"."""
    if tenant is None:
        return repr(name)
    return f"tenant {tenant!r} of {name!r}"


def check_fusion(fusion: str) -> None:
    """Raise UsageError unless `fusion` is one of FUSIONS (every store's `hybrid` does)."""
    if fusion not in FUSIONS:
        raise UsageError(f"unknown fusion {fusion!r}; use 'relative' or 'ranked'")
