"""The old path of stitcher.store.weaviate.leases, kept so that existing imports work."""

from stitcher.store.weaviate.leases import (
    LEASE_VISIBILITY_DELAYS,
    WeaviateLeases,
)

__all__ = [
    "LEASE_VISIBILITY_DELAYS",
    "WeaviateLeases",
]
