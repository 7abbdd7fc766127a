"""The core capability of a store: the chunks themselves (`CoreChunks`), what ingest, search and
stitching need."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from stitcher.filters import Where
from stitcher.models import (
    ChunkRecord,
    Hit,
    PendingDocument,
    SpanRequest,
    StoredDocument,
    WriteFailure,
)


class CoreChunks(Protocol):
    """The chunks of one collection, or of one tenant of a multi-tenant collection (a knowledge
    base among many in one collection; everything below then reads and writes that tenant only):
    what ingest, search and stitching need. Methods that read by id accept any number of ids."""

    @property
    def name(self) -> str:
        """The collection's name as the server spells it."""
        ...

    @property
    def tenant(self) -> str | None:
        """The tenant the store is bound to; None for a single-tenant collection."""
        ...

    @property
    def scope(self) -> str:
        """What the store holds, for messages: "'Docs'" or "tenant 'kb1' of 'Docs'"."""
        ...

    def exists(self) -> bool:
        """Whether the collection exists (a tenant store: whether its tenant does). A tenant
        store on a single-tenant collection raises TenancyMismatch; a single-tenant store on a
        multi-tenant collection is refused when it reads the settings."""
        ...

    def drop(self, *, all_tenants: bool = False) -> bool:
        """Delete the collection and forget its registered sources; False when it did not exist.
        A tenant store deletes its tenant only; a multi-tenant collection as a whole only goes
        with `all_tenants` (else TenancyMismatch)."""
        ...

    def count(self) -> int:
        """Number of chunk objects."""
        ...

    def documents(self) -> dict[str, StoredDocument]:
        """Every document in the collection, keyed by doc_id (walks the whole collection).

        Complete or not at all: ingest's skip/replace/prune decisions rest on it. A store whose
        listing can come up short (a replica behind) raises ListingIncomplete instead. A
        document recorded by `begin_documents` and not yet by `finish_documents` has
        `complete=False`.
        """
        ...

    def begin_documents(self, documents: Sequence[PendingDocument]) -> None:
        """Record these document versions as incomplete, before any of their chunks is written."""
        ...

    def finish_documents(self, doc_ids: Sequence[str]) -> None:
        """These documents are complete again (all chunks confirmed, old version deleted) or
        gone: the last write of a document. Ids never begun are ignored."""
        ...

    def vectors_by_chunk_hash(
        self, doc_id: str, chunk_hashes: Iterable[str]
    ) -> dict[str, list[float]]:
        """Stored vectors of this document's chunks whose text hash is in `chunk_hashes`."""
        ...

    def write(
        self, records: Sequence[ChunkRecord], vectors: Sequence[list[float]]
    ) -> list[WriteFailure]:
        """Insert or replace `records` (same id replaces). Returns what the server refused."""
        ...

    def delete_document(self, doc_id: str, keep_doc_hash: str | None = None) -> int:
        """Delete the document's chunks, except those of version `keep_doc_hash`. Returns count."""
        ...

    def fetch(self, ids: Sequence[str]) -> list[ChunkRecord]:
        """The records with these ids that exist, in any order."""
        ...

    def fetch_spans(self, requests: Sequence[SpanRequest]) -> list[ChunkRecord]:
        """All chunks overlapping any requested character range, in ONE server round trip."""
        ...

    def fields(self) -> dict[str, str]:
        """Filterable fields by the name users write in --where, with their kinds
        ("text", "word", "int", "number", "bool", "date", "uuid", "text[]")."""
        ...

    def stored_values(self, field: str, limit: int = 10_000) -> list[str]:
        """Distinct values of a text field, most common first (for `source`: the source
        names); stitcher.filtervalues uses them for tags' case and filters that match nothing."""
        ...

    def heads(
        self, where: Where | None = None, *, limit: int = 100, newest_first: bool = False
    ) -> list[ChunkRecord]:
        """The first chunk of every matching document (one per version), newest `date` first
        when asked."""
        ...

    def sample(self, limit: int = 100) -> list[ChunkRecord]:
        """Up to `limit` chunks, any of them (for example values)."""
        ...

    def records_with_vectors(
        self, page_size: int = 500
    ) -> Iterator[tuple[ChunkRecord, list[float]]]:
        """Every chunk with its vector, in id order, `page_size` at a time (constant memory).

        A store that finds the walk short only after streaming raises ListingIncomplete at the
        end, so a caller must not take what it wrote as complete before the iterator is done.
        """
        ...

    def hybrid(
        self,
        text: str,
        keyword_text: str,
        vector: list[float],
        *,
        limit: int,
        alpha: float,
        fusion: str = "relative",
        where: Where | None = None,
    ) -> list[Hit]:
        """Hybrid query: BM25 over `keyword_text` (already segmented) and vector similarity."""
        ...
