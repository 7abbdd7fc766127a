"""The old path of stitcher.store.weaviate.listing, kept so that existing imports work."""

from stitcher.store.weaviate.listing import (
    between_counts,
    documents_by_aggregate,
    documents_by_walk,
)

__all__ = [
    "between_counts",
    "documents_by_aggregate",
    "documents_by_walk",
]
