"""The old path of stitcher.store.weaviate.seed, kept so that existing imports work."""

from stitcher.store.weaviate.seed import (
    MAX_HOP_FETCH,
    SEED_PARENT,
    SEED_PROPERTIES,
    SEED_SOURCE,
    SEED_TEXT,
    default_vector,
    detect_layout,
    to_seed_object,
)

__all__ = [
    "MAX_HOP_FETCH",
    "SEED_PARENT",
    "SEED_PROPERTIES",
    "SEED_SOURCE",
    "SEED_TEXT",
    "default_vector",
    "detect_layout",
    "to_seed_object",
]
