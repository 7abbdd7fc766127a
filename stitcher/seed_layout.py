"""Collections made the seed's way: recognise them, search them with stitching, adopt them.

Seed 003 loads documents with LangChain's `WeaviateVectorStore.from_documents(docs, embeddings,
client=client, index_name=..., uuids=[uuid4, ...])`, after chaining every chunk to the one
before it through a `parent_id` metadata value. Such a collection has an auto-schema (`text`,
`source`, `parent_id`, all word-tokenized text), random ids, no offsets, no chunk index, and an
overlap nobody recorded. stitcher can

* tell it apart from its own layout (`detect_layout`),
* search it with stitched, whole-sentence passages in a bounded number of round trips
  (`seed_search`, stitcher.foreign.seed_search), and
* rewrite it in place into stitcher's layout, keeping every stored vector, so that later runs of
  `stitcher ingest` take it over (`adopt`, stitcher.foreign.adopt).
"""

from __future__ import annotations

from typing import Any, Literal

from stitcher.errors import CollectionMissing
from stitcher.foreign.adopt import AdoptProgress, AdoptReport, adopt, doc_id_for_source
from stitcher.foreign.chains import SeedObject, chains, overlap_length, reconstruct
from stitcher.foreign.seed_search import DEFAULT_ROUND_TRIPS, seed_search

Layout = Literal["stitcher", "seed", "unknown"]

__all__ = [
    "DEFAULT_ROUND_TRIPS",
    "AdoptProgress",
    "AdoptReport",
    "Layout",
    "SeedObject",
    "adopt",
    "chains",
    "detect_layout",
    "doc_id_for_source",
    "overlap_length",
    "reconstruct",
    "seed_search",
]

#: Properties a seed-layout collection has (LangChain's text key and the seed's chain link).
SEED_PROPERTIES = frozenset({"text", "parent_id"})


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
    from stitcher.store.schema import settings_from_description

    if not client.collections.exists(name):
        raise CollectionMissing(
            f"collection {name!r} does not exist on the server; check --collection"
        )
    config = client.collections.use(name).config.get()
    if settings_from_description(config.description) is not None:
        return "stitcher"
    names = {prop.name for prop in config.properties}
    if names >= SEED_PROPERTIES:
        return "seed"
    return "unknown"
