"""discover → load → chunk → diff against the store → embed what is new → write → delete stale.

`run.ingest` is the whole run; how re-runs and crashes stay safe is told there. Every name that
was ever imported from `stitcher.ingest` is still importable from here.
"""

from stitcher.ingest.options import (
    DeleteLimit,
    DocumentEmbedder,
    IngestOptions,
    IngestProgress,
    SilentProgress,
)
from stitcher.ingest.preflight import list_documents, sources_of
from stitcher.ingest.run import ingest
from stitcher.ingest.summary import IngestSummary

__all__ = [
    "DeleteLimit",
    "DocumentEmbedder",
    "IngestOptions",
    "IngestProgress",
    "IngestSummary",
    "SilentProgress",
    "ingest",
    "list_documents",
    "sources_of",
]
