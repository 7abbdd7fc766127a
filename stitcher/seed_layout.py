"""Collections made the seed's way: recognise them, search them with stitching, adopt them.

Seed 003 loads documents with LangChain's `WeaviateVectorStore.from_documents(docs, embeddings,
client=client, index_name=..., uuids=[uuid4, ...])`, after chaining every chunk to the one
before it through a `parent_id` metadata value. Such a collection has an auto-schema (`text`,
`source`, `parent_id`, all word-tokenized text), random ids, no offsets, no chunk index, and an
overlap nobody recorded. stitcher can

* tell it apart from its own layout (`detect_layout`, stitcher.store.weaviate.seed),
* search it with stitched, whole-sentence passages in a bounded number of round trips
  (`seed_search`, stitcher.foreign.seed_search), and
* rewrite it in place into stitcher's layout, keeping every stored vector, so that later runs of
  `stitcher ingest` take it over (`adopt`, stitcher.foreign.adopt).
"""

from __future__ import annotations

from stitcher.foreign.adopt import AdoptProgress, AdoptReport, adopt, doc_id_for_source
from stitcher.foreign.chains import SeedObject, chains, overlap_length, reconstruct
from stitcher.foreign.seed_search import DEFAULT_ROUND_TRIPS, seed_search
from stitcher.store.base import Layout
from stitcher.store.weaviate.seed import SEED_PROPERTIES, detect_layout

__all__ = [
    "DEFAULT_ROUND_TRIPS",
    "SEED_PROPERTIES",
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
