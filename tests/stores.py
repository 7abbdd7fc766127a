"""A `store` fixture that runs a test on both stores: the in-memory one and the real Weaviate."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest


def both_stores(prefix: str) -> Any:
    """A `store` fixture run once on the in-memory store and once on the real Weaviate one
    (marked integration), in a fresh collection named `prefix` + random hex, removed after.

    Use as `store = both_stores("Prune")` at module level.
    """

    @pytest.fixture(params=["memory", pytest.param("weaviate", marks=pytest.mark.integration)])
    def store(request: pytest.FixtureRequest) -> Iterator[Any]:
        name = prefix + uuid.uuid4().hex[:12]
        if request.param == "memory":
            from stitcher.store.memory import MemoryStore

            yield MemoryStore(name)
            return
        from stitcher.store.weaviate import WeaviateStore

        client = request.getfixturevalue("weaviate_client")
        real = WeaviateStore(client, name)
        yield real
        real.drop()

    return store
