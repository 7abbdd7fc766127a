"""stitcher: load documents into Weaviate; search them so every hit comes back as whole sentences.

The public API::

    from stitcher import Stitcher

    with Stitcher() as s:                      # the local server; or Stitcher(url=..., api_key=...)
        s.ingest(["docs/"])
        for p in s.search("重新编译内核", limit=3):
            print(p.source, p.start, p.end, p.text)

Names are loaded lazily so that `import stitcher` (and `stitcher --help`) stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "ChunkRecord",
    "CollectionSettings",
    "Condition",
    "Document",
    "IngestOptions",
    "IngestSummary",
    "Passage",
    "SearchOptions",
    "SearchRequest",
    "SearchResult",
    "Stitcher",
    "StitcherError",
    "Where",
]

_WHERE = {
    "Stitcher": "stitcher.api",
    "IngestOptions": "stitcher.ingest",
    "IngestSummary": "stitcher.ingest",
    "SearchOptions": "stitcher.search",
    "SearchRequest": "stitcher.request",
    "SearchResult": "stitcher.search",
    "Passage": "stitcher.models",
    "Document": "stitcher.models",
    "ChunkRecord": "stitcher.models",
    "CollectionSettings": "stitcher.models",
    "Where": "stitcher.filters",
    "Condition": "stitcher.filters",
    "StitcherError": "stitcher.errors",
}

if TYPE_CHECKING:
    from stitcher.api import Stitcher
    from stitcher.errors import StitcherError
    from stitcher.filters import Condition, Where
    from stitcher.ingest import IngestOptions, IngestSummary
    from stitcher.models import ChunkRecord, CollectionSettings, Document, Passage
    from stitcher.request import SearchRequest
    from stitcher.search import SearchOptions, SearchResult


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'stitcher' has no attribute {name!r}")
    return getattr(import_module(module), name)
