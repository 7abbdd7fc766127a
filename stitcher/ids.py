"""Deterministic chunk ids and the records written for one document.

An id depends on the collection, the document (whose id starts with its source), the document
version (which includes the text rules version, stitcher.rules) and the chunk's position, so
re-ingesting an unchanged document rewrites the same objects instead of adding duplicates, and a
changed document — or one stored under older text rules — gets new ids that never collide with
the old version's.
"""

from __future__ import annotations

import bisect
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from stitcher import rules
from stitcher.config import DEFAULT_MAX_EXTEND
from stitcher.errors import UsageError, setting
from stitcher.models import (
    Chunk,
    ChunkContext,
    ChunkRecord,
    Document,
    StoredDocument,
    sha256_hex,
)
from stitcher.sentences import is_sentence_end, is_sentence_start, next_non_space

#: Namespace of every chunk id. Changing it (or the encoding in `chunk_uuid`) changes all ids and
#: makes every stored document look new: never do it within a layout version.
CHUNK_NAMESPACE = uuid.UUID("6f1c3e0a-5b7d-5c2e-9a41-2d8e7f3b9c10")

# Weaviate class names must be GraphQL type names that start with a capital letter.
_COLLECTION_NAME_RE = re.compile(r"[A-Z][_0-9A-Za-z]*")


def canonical_collection_name(name: str) -> str:
    """The spelling Weaviate stores a collection under: first letter upper-cased.

    Weaviate upper-cases the first letter on creation, so "docs" and "Docs" are one collection;
    ids and lookups must use the canonical form to agree.

    Args:
        name: The collection name as the user typed it.

    Returns:
        The name with its first letter upper-cased.

    Raises:
        UsageError: The name is not a valid Weaviate collection name.
    """
    canonical = name[:1].upper() + name[1:]
    if not _COLLECTION_NAME_RE.fullmatch(canonical):
        raise UsageError(
            f"invalid collection name {name!r}: use a letter followed by letters, digits or _ "
            f"(e.g. {setting('collection', 'Docs')})"
        )
    return canonical


# Weaviate's rule for tenant names (v1.38.11 answers 422 with exactly this wording otherwise).
_TENANT_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def checked_tenant_name(name: str | None) -> str | None:
    """`name` if Weaviate accepts it as a tenant name; None stays None (no tenant).

    Tenant names are case-sensitive and kept as typed (unlike collection names).

    Raises:
        UsageError: Not 1-64 characters of a-z, A-Z, 0-9, _ and -.
    """
    if name is None:
        return None
    if not _TENANT_NAME_RE.fullmatch(name):
        raise UsageError(
            f"invalid tenant name {name!r}: Weaviate allows 1 to 64 characters, letters a-z and "
            f"A-Z, digits, _ and - (e.g. {setting('tenant', 'kb-042')})"
        )
    return name


def chunk_uuid(collection: str, doc_id: str, doc_hash: str, index: int) -> str:
    """The id of chunk `index` of one version (`doc_hash`) of a document, as a UUID string.

    The four values are encoded as a JSON list before hashing: concatenating them, as
    `weaviate.util.generate_uuid5` does, would let ("a", "bc") and ("ab", "c") collide.

    Args:
        collection: Collection name in any accepted spelling; it is canonicalised first.
        doc_id: Stable document id ("<source>/<path relative to the ingest root>").
        doc_hash: Hash of the document version (`Document.doc_hash`).
        index: Position of the chunk in the document, from 0.

    Returns:
        A version-5 UUID in its canonical 36-character form.

    Raises:
        UsageError: The collection name is invalid.
    """
    key = json.dumps([canonical_collection_name(collection), doc_id, doc_hash, index])
    return str(uuid.uuid5(CHUNK_NAMESPACE, key))


def chunk_hash(text: str) -> str:
    """Hex SHA-256 of a chunk's text: equal text reuses a stored vector instead of re-embedding."""
    return sha256_hex(text)


def page_of(offset: int, page_starts: Sequence[int]) -> int:
    """1-based page holding character `offset`, given the offset where each page starts."""
    return max(1, bisect.bisect_right(page_starts, offset))


def line_of(offset: int, line_starts: Sequence[int]) -> int:
    """The 1-based line of the file whose text holds `offset` of the loaded text, given where
    each line of the file begins in it (`stitcher.loaders.lines.line_starts`)."""
    return max(1, bisect.bisect_right(line_starts, offset))


#: Formats whose text is extracted from markup or a binary layout: a line of that text is no
#: line a reader could find in the file, so their chunks get no "line".
_EXTRACTED_SUFFIXES = frozenset(
    {".html", ".htm", ".xhtml", ".pdf", ".docx", ".epub", ".odt", ".rtf"}
)


#: Document metadata that maps offsets (to pages, to the file's lines): used to number a
#: chunk's page or line, never stored with it.
_OFFSET_MAPS = frozenset({"page_starts", "line_starts"})


def has_lines(source: str) -> bool:
    """Whether the lines of a document's text are lines of its file (a text format)."""
    name = source.rsplit("/", 1)[-1].lower()
    for compression in (".gz", ".bz2", ".xz"):  # lines of the decompressed text
        name = name.removesuffix(compression)
    return "." + name.rpartition(".")[2] not in _EXTRACTED_SUFFIXES


#: Characters of surrounding text stored with every chunk: the default stitching bound plus
#: the look-ahead stitching uses to see a terminator's closing quotes.
CONTEXT_CHARS = DEFAULT_MAX_EXTEND + 64


def _context(text: str, chunks: Sequence[Chunk], index: int) -> ChunkContext:
    """The text within CONTEXT_CHARS of chunk `index` and the other chunks it touches."""
    chunk = chunks[index]
    lo, hi = max(0, chunk.start - CONTEXT_CHARS), min(len(text), chunk.end + CONTEXT_CHARS)
    neighbours = []
    for j in range(index - 1, -1, -1):
        if chunks[j].end <= lo:
            break
        neighbours.append((j, chunks[j].start, chunks[j].end))
    for j in range(index + 1, len(chunks)):
        if chunks[j].start >= hi:
            break
        neighbours.append((j, chunks[j].start, chunks[j].end))
    return ChunkContext(text[lo : chunk.start], text[chunk.end : hi], tuple(sorted(neighbours)))


def sentence_edges(text: str, start: int, end: int) -> tuple[bool, bool]:
    """Whether `text[start:end]`, whitespace aside, begins and ends on sentence boundaries."""
    first = next_non_space(text, start, end)
    last = end
    while last > first and text[last - 1].isspace():
        last -= 1
    if first >= last:
        return False, False
    return (
        is_sentence_start(text, first, at_doc_start=True, at_doc_end=True),
        is_sentence_end(text, last, at_doc_start=True, at_doc_end=True),
    )


def build_records(
    collection: str,
    doc: Document,
    chunks: Sequence[Chunk],
    *,
    indices: range | None = None,
    doc_hash: str | None = None,
) -> list[ChunkRecord]:
    """The records to store for one document: deterministic ids, chained by `parent_id`.

    Each record's `parent_id` is the id of the chunk before it (None for the first), so a reader
    can walk a document backwards. Metadata is the document's, without the bulky "page_starts"
    list but with "page": the 1-based page where the chunk starts, when page starts are known,
    or else "line": the 1-based line of the text where the chunk starts, for text formats.

    Args:
        collection: Collection name in any accepted spelling.
        doc: The loaded document.
        chunks: The document's chunks, in order (from `stitcher.chunking.split`).
        indices: Build only these records (a large document is written part by part); the
            first one's `parent_id` still points at the chunk before it.
        doc_hash: `doc.doc_hash` if already known (it hashes the whole text).

    Returns:
        One record per chunk, in the same order.

    Raises:
        UsageError: The collection name is invalid.
    """
    canonical = canonical_collection_name(collection)
    doc_hash = doc_hash or doc.doc_hash
    page_starts = doc.metadata.get("page_starts")
    file_line_starts = doc.metadata.get("line_starts")
    base_metadata = {key: value for key, value in doc.metadata.items() if key not in _OFFSET_MAPS}
    records = []
    span = indices if indices is not None else range(len(chunks))
    parent_id = chunk_uuid(canonical, doc.doc_id, doc_hash, span.start - 1) if span.start else None
    # Lines are counted on from one chunk start to the next: one pass over the text per part.
    counted_to, line = 0, 1
    numbered = not page_starts and has_lines(doc.source)
    for index in span:
        chunk = chunks[index]
        record_id = chunk_uuid(canonical, doc.doc_id, doc_hash, index)
        metadata: dict[str, Any] = dict(base_metadata)
        starts, ends = sentence_edges(doc.text, chunk.start, chunk.end)
        context = _context(doc.text, chunks, index)
        if page_starts:
            metadata["page"] = page_of(chunk.start, page_starts)
        elif file_line_starts:
            # The line of its first character that is not space (a chunk may begin with the
            # line break and indent before a line).
            first = next_non_space(doc.text, chunk.start, chunk.end)
            metadata["line"] = line_of(first, file_line_starts)
        elif numbered:
            line += doc.text.count("\n", counted_to, chunk.start)
            counted_to = chunk.start
            metadata["line"] = line
        records.append(
            ChunkRecord(
                id=record_id,
                doc_id=doc.doc_id,
                doc_hash=doc_hash,
                chunk_index=index,
                start=chunk.start,
                end=chunk.end,
                text=chunk.text,
                source=doc.source,
                chunk_hash=chunk_hash(chunk.text),
                doc_length=len(doc.text),
                starts_sentence=starts,
                ends_sentence=ends,
                context=context,
                parent_id=parent_id,
                metadata=metadata,
                rules=rules.TEXT_RULES_VERSION,
            )
        )
        parent_id = record_id
    return records


def source_of(doc_id: str) -> str:
    """The source a document id belongs to: its part before the first "/" (`ingest` names ids
    `SOURCE/relative/path`); a file ingested on its own is its own source. This is what
    `--where source=NAME` matches, what `stats` counts per source and the `source` of a hit.
    """
    return doc_id.split("/", 1)[0]


def documents_by_source(documents: Iterable[StoredDocument]) -> dict[str, dict[str, int]]:
    """Documents and chunks per source, sorted by source name."""
    counts: dict[str, dict[str, int]] = {}
    for document in documents:
        row = counts.setdefault(source_of(document.doc_id), {"documents": 0, "chunks": 0})
        row["documents"] += 1
        row["chunks"] += document.chunk_count
    return dict(sorted(counts.items()))
