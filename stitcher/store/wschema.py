"""The old path of stitcher.store.weaviate.schema, kept so that existing imports work."""

from stitcher.store.weaviate.schema import (
    DEFAULT_CLUSTER_REPLICATION,
    MAX_RESULTS,
    bookkeeping_uuid,
    core_properties,
    ensure_bookkeeping_collection,
    ensure_text_property,
    extra_property,
    has_property,
    kind_of_property,
    vector_index_for,
)

__all__ = [
    "DEFAULT_CLUSTER_REPLICATION",
    "MAX_RESULTS",
    "bookkeeping_uuid",
    "core_properties",
    "ensure_bookkeeping_collection",
    "ensure_text_property",
    "extra_property",
    "has_property",
    "kind_of_property",
    "vector_index_for",
]
