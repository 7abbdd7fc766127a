"""The old path of stitcher.store.weaviate.filters, kept so that existing imports work."""

from stitcher.store.weaviate.filters import (
    path_filter,
    source_filter,
    translate,
)

__all__ = [
    "path_filter",
    "source_filter",
    "translate",
]
