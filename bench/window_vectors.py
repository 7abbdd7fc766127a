"""Issue 35 item 2 as an experiment: each chunk's vector made from its sentence-complete window.

`python bench/questions.py --embed-windows N` ingests with this patch: the stored chunk (text,
offsets, BM25 side) is unchanged, only the text given to the embedder is the chunk widened to
the sentence start before it and the sentence end after it, each side by at most N characters
(the passage a hit on that chunk would come back as, bounded). Query vectors are as before.
The product is not changed by this module; it exists to measure the lever first.
"""

from __future__ import annotations

from typing import Any

from stitcher.sentences import sentence_end_at_or_after, sentence_start_at_or_before


def window_text(text: str, start: int, end: int, reach: int) -> str:
    """`text[start:end]` widened to whole sentences, at most `reach` characters on each side."""
    lo, hi = max(0, start - reach), min(len(text), end + reach)
    left = sentence_start_at_or_before(
        text, start, lo, at_doc_start=True, at_doc_end=hi == len(text)
    )
    # The last non-space character of the chunk: an end inside trailing space is the next one.
    last = end
    while last > start and text[last - 1].isspace():
        last -= 1
    right = sentence_end_at_or_after(text, last, hi, at_doc_start=True, at_doc_end=True)
    return text[start if left is None else left : end if right is None else max(right, end)]


def embed_windows(reach: int) -> None:
    """Patch ingest so every missing vector is computed from its chunk's window."""
    import importlib

    # The function lives in stitcher.ingest (or, once split, a module of that package).
    owner: Any = None
    for name in ("stitcher.ingest", "stitcher.ingest.pipeline", "stitcher.ingest.embedding"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "_embed_missing"):
            owner = module
            break
    if owner is None:
        raise SystemExit("stitcher's _embed_missing not found: update bench/window_vectors.py")
    original = owner._embed_missing

    def windowed(embedder: Any, group: list[Any], summary: Any, progress: Any) -> None:
        class Widened:
            """The embedder, fed each missing chunk's window instead of its text."""

            def __init__(self) -> None:
                self.windows: list[str] = []

            def embed_documents(self, texts: list[str]) -> Any:
                return embed(self.windows)

        missing = [(item, i) for item in group for i, v in enumerate(item.vectors) if v is None]
        windows = [
            window_text(item.doc.text, item.records[i].start, item.records[i].end, reach)
            for item, i in missing
        ]
        embed_array = getattr(embedder, "embed_array", None)
        embed = embed_array if callable(embed_array) else embedder.embed_documents
        widened = Widened()
        widened.windows = windows
        original(widened, group, summary, progress)

    owner._embed_missing = windowed
