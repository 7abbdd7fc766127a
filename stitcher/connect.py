"""The old path of stitcher.store.weaviate.connection, kept so that existing imports work."""

from stitcher.store.weaviate.connection import connect, import_weaviate

__all__ = ["connect", "import_weaviate"]
