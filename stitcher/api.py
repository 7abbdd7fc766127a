"""`Stitcher`: the one entry point of the library. The CLI is a thin wrapper over it.

Everything but `as_retriever` is `stitcher.session.Session`: the LangChain adapter
(stitcher.langchain) is built on `Session`, and this class sits on top of both, so that no module
imports one that imports it back.
"""

from __future__ import annotations

from typing import Any

from stitcher.request import SearchRequest
from stitcher.session import (
    FieldInfo,
    Notice,
    Session,
    SqlJoin,
    as_where,
    backup_local,
    export_model,
    restore_local,
)

__all__ = [
    "FieldInfo",
    "Notice",
    "SearchRequest",
    "Session",
    "SqlJoin",
    "Stitcher",
    "as_where",
    "backup_local",
    "export_model",
    "restore_local",
]


class Stitcher(Session):
    """A connection to one Weaviate collection, for ingesting and searching (see `Session`).

    Use it as a context manager, or call `close()`::

        with Stitcher() as s:
            s.ingest(["docs/"])
            for passage in s.search("how do I rebuild the kernel?"):
                print(passage.source, passage.text)
    """

    def as_retriever(self, **kwargs: Any) -> Any:
        """A LangChain retriever over this collection (k=5, alpha=..., where=...)."""
        # Deferred: stitcher.langchain imports LangChain, which only retriever users pay for.
        from stitcher.langchain import StitchedRetriever

        return StitchedRetriever(stitcher=self, **kwargs)
