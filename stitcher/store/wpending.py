"""The old path of stitcher.store.weaviate.pending, kept so that existing imports work."""

from stitcher.store.weaviate.pending import (
    WeaviatePending,
)

__all__ = [
    "WeaviatePending",
]
