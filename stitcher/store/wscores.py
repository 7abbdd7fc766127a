"""The old path of stitcher.store.weaviate.scores, kept so that existing imports work."""

from stitcher.store.weaviate.scores import (
    parse_explain,
    weaviate_fusion,
)

__all__ = [
    "parse_explain",
    "weaviate_fusion",
]
