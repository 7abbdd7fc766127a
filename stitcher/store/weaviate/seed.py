"""Reading collections made the seed's way (LangChain's WeaviateVectorStore plus seed 003's
`parent_id` chain): what tells the layout apart, and a client object as a SeedObject."""

from __future__ import annotations

from typing import Any

from stitcher.errors import CollectionMissing, setting
from stitcher.models import SeedObject
from stitcher.store.base import Layout
from stitcher.store.schema import settings_from_description

#: Properties a seed-layout collection has (LangChain's text key and the seed's chain link).
SEED_PROPERTIES = frozenset({"text", "parent_id"})

#: The seed layout's property names: LangChain's text key, its source, the seed's chain link.
SEED_TEXT = "text"
SEED_SOURCE = "source"
SEED_PARENT = "parent_id"

#: Objects one seed-layout hop asks for at most; a hop needs at most two per open chain end.
MAX_HOP_FETCH = 10_000


def default_vector(vectors: Any) -> list[float] | None:
    """The object's "default" named vector (a single-vector collection's), else its first one:
    a chunk of a by-script collection carries one named vector, its model part's
    (stitcher.store.vectors), and a seed collection made by LangChain names its vector
    otherwise."""
    if isinstance(vectors, dict):
        vector = vectors.get("default")
        if vector is None and vectors:
            vector = next(iter(vectors.values()))
        return [float(x) for x in vector] if vector is not None else None
    return None


def to_seed_object(obj: Any, *, with_vector: bool = False) -> SeedObject:
    """A `SeedObject` from a weaviate-client result object (any layout: what it stores)."""
    properties = dict(obj.properties or {})
    text = properties.pop(SEED_TEXT, None)
    source = properties.pop(SEED_SOURCE, None)
    parent = properties.pop(SEED_PARENT, None)
    vector = default_vector(obj.vector) if with_vector else None
    return SeedObject(
        id=str(obj.uuid),
        text=str(text or ""),
        source=str(source or ""),
        parent_id=str(parent) if parent else None,
        extra={k: v for k, v in properties.items() if v is not None},
        vector=vector,
    )


def detect_layout(client: Any, name: str) -> Layout:
    """Which layout a collection has.

    "stitcher": stitcher's settings are recorded in its description. "seed": no settings, but a
    `text` and a `parent_id` property (LangChain's text key and seed 003's chain link; `source`
    is usual but not required). "unknown": anything else.

    Args:
        client: A connected `weaviate.WeaviateClient`.
        name: The collection's name.

    Raises:
        CollectionMissing: The collection does not exist.
    """
    if not client.collections.exists(name):
        raise CollectionMissing(
            f"collection {name!r} does not exist on the server; check {setting('collection')}"
        )
    config = client.collections.use(name).config.get()
    if settings_from_description(config.description) is not None:
        return "stitcher"
    names = {prop.name for prop in config.properties}
    if names >= SEED_PROPERTIES:
        return "seed"
    return "unknown"
