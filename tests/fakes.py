"""Test doubles for pure-logic tests: a deterministic embedder and a store that counts calls.

The real embedder and the real Weaviate store are exercised by the integration tests; these
exist so ingest/search logic can be tested in milliseconds.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from typing import Any


class FakeEmbedder:
    """Hashes character bigrams into a small vector: similar texts get similar vectors."""

    name = "fake/bigram-hash"

    def __init__(self, dimension: int = 16) -> None:
        self.dimension = dimension
        self.calls = 0
        self.embedded = 0

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dimension
        for a, b in itertools.pairwise(text):
            digest = hashlib.blake2b((a + b).encode(), digest_size=2).digest()
            vec[int.from_bytes(digest, "big") % self.dimension] += 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.embedded += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return self._vector(text)


class CountingStore:
    """Wraps a store and counts the calls that reach the server during a query."""

    QUERY_METHODS = ("hybrid", "fetch", "fetch_spans")

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name in self.QUERY_METHODS and callable(attr):

            def counted(*args: Any, **kwargs: Any) -> Any:
                self.calls.append(name)
                return attr(*args, **kwargs)

            return counted
        return attr
