"""Which named vector a chunk's vector, or a query's, belongs to: the layout of a collection's
vectors, shared by every store. Nothing here imports weaviate.

A collection made with a by-script model (`--model bilingual`) records VECTORS_BY_SCRIPT in its
settings and holds one named vector per part of the model, named after the part's script
(ROUTE_SCRIPTS: "latin", "han"), each with its own index. A chunk carries only the vector of the
part that embedded it, and a query searches only the vector of the part that embedded it — in
one shared index (the older, zero-padded layout, VECTORS_SINGLE) the two models' spaces met and
their cosines said nothing, and e5's vectors needed an exact scan (BENCHMARKS.md, issue 35
item 3: the same ranks for all 300 questions, HNSW recall@15 0.996).

Which part embeds a text is stitcher.scripts.route_of (the by-script embedder's rule), a
function of the text alone; the stores apply it to the chunk text and the query text they are
given, which are the texts the by-script embedder routed. So the vectors stay where the
embedder's parts put them without the store protocol carrying a name beside each vector, and an
export (one vector per chunk) is imported into either layout unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from stitcher.models import VECTORS_BY_SCRIPT, VECTORS_SINGLE
from stitcher.scripts import ROUTE_SCRIPTS, route_of

#: The layouts a collection's settings can record.
LAYOUTS = (VECTORS_SINGLE, VECTORS_BY_SCRIPT)
#: The named vectors of a VECTORS_BY_SCRIPT collection, one per part of its model.
BY_SCRIPT_VECTORS: tuple[str, ...] = ROUTE_SCRIPTS


def check_layout(vectors: str) -> str:
    """`vectors` itself; ValueError for a layout this stitcher does not know."""
    if vectors not in LAYOUTS:
        raise ValueError(f"unknown vector layout {vectors!r}; known: {', '.join(LAYOUTS)}")
    return vectors


def vector_name(vectors: str, text: str) -> str | None:
    """The named vector that holds the vector of `text` (a chunk's or a query's) in a collection
    of layout `vectors`; None for a single-vector collection (its one unnamed vector)."""
    if check_layout(vectors) == VECTORS_SINGLE:
        return None
    return route_of(text)


def vector_names(vectors: str) -> tuple[str, ...]:
    """The named vectors a collection of layout `vectors` is created with (none: one unnamed)."""
    return BY_SCRIPT_VECTORS if check_layout(vectors) == VECTORS_BY_SCRIPT else ()


def describe(vectors: str, index: str) -> str:
    """The layout in a few words, for `doctor` and `stats`: "one vector, flat index" or "named
    vectors latin, han (hnsw index each)"."""
    names: Sequence[str] = vector_names(vectors)
    if not names:
        return f"one vector, {index} index"
    return f"named vectors {', '.join(names)} ({index} index each)"
