"""The ChunkStore on Weaviate (weaviate-client v4): `WeaviateStore` and the modules it is made of.

The client itself is imported only inside the functions that send requests (about a second), so
importing this package is cheap.
"""

from stitcher.store.weaviate.connection import connect
from stitcher.store.weaviate.core import (
    CONSISTENCY_LEVELS,
    DEFAULT_CONSISTENCY,
    DEFAULT_LISTING_PATIENCE,
)
from stitcher.store.weaviate.store import WeaviateStore

__all__ = [
    "CONSISTENCY_LEVELS",
    "DEFAULT_CONSISTENCY",
    "DEFAULT_LISTING_PATIENCE",
    "WeaviateStore",
    "connect",
]
