"""One model per script: each text is embedded by the model for its main script.

No small model here reads English and Chinese questions equally well (BENCHMARKS.md, issue 15):
all-MiniLM-L6-v2 is the best on English questions and reads Chinese characters as [UNK];
multilingual-e5-small is the best on Chinese ones and worse than MiniLM on English. A by-script
model (stitcher.embed.models.BY_SCRIPT) gives each text the model of its language, so a Chinese
chunk and a Chinese question meet in e5's space, an English chunk and an English question in
MiniLM's.

Every vector is padded with zeros to the longest part's dimension, which leaves every cosine
between two vectors of the same part unchanged. A collection made with a by-script model holds
each part's vectors in a named vector of its own (stitcher.store.vectors), and a query searches
only its own part's: it never meets the other language's chunks on the vector side. Collections
made before named vectors hold all of them in one vector with an exact index, where a query also
meets the other part's vectors, whose cosines say nothing. Chinese questions about English
documents stay unanswered, as with every model measured here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stitcher.embed.models import ROUTE_SCRIPTS, Embedder

# The routing rule is stitcher.scripts' (the stores route vectors by it too); kept importable here.
from stitcher.scripts import HAN_ROUTE_SHARE as HAN_ROUTE_SHARE
from stitcher.scripts import route_of

# numpy (~100 ms) is imported where vectors are assembled: naming a by-script model or routing a
# query must not load it.


class ScriptRoutedEmbedder:
    """An Embedder over one embedder per script (parts keyed as in ROUTE_SCRIPTS).

    Attributes:
        name: The by-script model's stored name.
        parts: The embedder for each script.
        calls: How many embed calls were made on this embedder.
        embedded: How many texts it embedded in total.
    """

    def __init__(self, name: str, parts: Mapping[str, Any]) -> None:
        if set(parts) != set(ROUTE_SCRIPTS):
            raise ValueError(f"a by-script embedder needs a latin and a han part, got {set(parts)}")
        self.name = name
        self.parts = dict(parts)
        self.calls = 0
        self.embedded = 0
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        """The longest part's dimension (asking loads every part's model)."""
        if self._dimension is None:
            self._dimension = max(int(part.dimension) for part in self.parts.values())
        return self._dimension

    def part_for(self, text: str) -> Embedder:
        """The embedder that embeds `text` (by route_of)."""
        embedder: Embedder = self.parts[route_of(text)]
        return embedder

    def embed_array(self, texts: Sequence[str]) -> Any:
        """Embed texts for storage: float32 array (len(texts), dimension), input order kept.

        Each part embeds its own texts in one call (so its batching and length sorting work as
        usual); a part with no texts here is not called (its model still loads once, for
        `dimension`).
        """
        import numpy as np

        self.calls += 1
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        groups: dict[str, list[int]] = {}
        for index, text in enumerate(texts):
            groups.setdefault(route_of(text), []).append(index)
        for script, indices in groups.items():
            part = self.parts[script]
            embed: Callable[[Sequence[str]], Any] = getattr(
                part, "embed_array", part.embed_documents
            )
            block = np.asarray(embed([texts[i] for i in indices]), dtype=np.float32)
            out[np.asarray(indices), : block.shape[1]] = block
        self.embedded += len(texts)
        return out

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts for storage, in input order (padded to `dimension`)."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed one query with its script's model, padded to `dimension`."""
        self.calls += 1
        vector = list(self.part_for(text).embed_query(text))
        self.embedded += 1
        return vector + [0.0] * (self.dimension - len(vector))

    def close(self) -> None:
        """Close the parts that hold processes (an encode pool)."""
        for part in self.parts.values():
            close = getattr(part, "close", None)
            if callable(close):
                close()
