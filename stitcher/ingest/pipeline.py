"""Embedding and writing, a group of chunks at a time, on two threads (`Pipeline`).

The run decides what to write; this module decides when: the order of the store's mutations
here (a version recorded as incomplete, written, confirmed, only then the old version deleted)
is what makes re-runs and crashes safe, as `stitcher.ingest.run` tells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stitcher.errors import SettingsMismatch, StitcherError, setting
from stitcher.faults import fault_point
from stitcher.ids import build_records
from stitcher.ingest.options import DocumentEmbedder, IngestOptions, IngestProgress
from stitcher.ingest.summary import IngestSummary, count_failed, failure_reason
from stitcher.models import (
    Chunk,
    ChunkRecord,
    CollectionSettings,
    Document,
    PendingDocument,
    WriteFailure,
)
from stitcher.store.base import ChunkStore

if TYPE_CHECKING:
    import numpy as np


#: Embedding batches per write group. A group is embedded, then uploaded while the next group is
#: embedded; several batches per group let the embedder sort chunks by length (less padding).
BATCHES_PER_GROUP = 8


@dataclass
class _Pending:
    """A part of a document version to write: its records, and which still need a vector.

    A document larger than a group is written in several parts; only its last part, once
    every part is stored, lets the old version be deleted.
    """

    doc: Document
    doc_hash: str
    records: list[ChunkRecord]
    #: float32 rows (views into the group's embedding array, or reused stored vectors).
    vectors: list[np.ndarray | None]
    stale: bool  # an older version exists and must be deleted once this one is stored
    last: bool = True  # the document's last part
    first: bool = True  # the document's first part: it is recorded as incomplete before it
    chunk_count: int = 0  # of the whole document version


class Pipeline:
    """Embeds and writes documents as they arrive, a group at a time.

    Memory stays bounded by the group size however large the corpus, embedding a group
    overlaps the upload of the one before, and a document's old version is deleted as soon as
    its new version is confirmed — so a run killed half way has finished whole documents. Every
    store mutation (write, then delete) runs on one writer thread: the Weaviate batch writer is
    not thread-safe, and deletes must follow their writes anyway.
    """

    def __init__(
        self,
        store: ChunkStore,
        wanted: CollectionSettings,
        existing: CollectionSettings | None,
        make_embedder: Callable[[], DocumentEmbedder],
        options: IngestOptions,
        summary: IngestSummary,
        progress: IngestProgress,
    ) -> None:
        self._store = store
        self._wanted = wanted
        self._existing = existing
        self._make_embedder = make_embedder
        self._embedder: DocumentEmbedder | None = None
        self._chunks_per_group = options.batch_size * BATCHES_PER_GROUP
        self._summary = summary
        self._progress = progress
        self._report = (summary, progress)
        self._group: list[_Pending] = []
        self._group_chunks = 0
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stitcher-writer")
        self._in_flight: tuple[Future[_GroupResult], list[_Pending]] | None = None
        #: Documents whose new version is confirmed stored (for messages after a fault).
        self.stored = 0
        #: Documents that failed in some part: their old version must stay. Read by the writer.
        self._failed_docs: set[str] = set()

    def add_document(
        self, doc: Document, doc_hash: str, chunks: Sequence[Chunk], stale: bool
    ) -> None:
        """Queue a document, part by part (records are built one group's worth at a time)."""
        size = self._chunks_per_group
        for begin in range(0, len(chunks), size):
            span = range(begin, min(begin + size, len(chunks)))
            try:
                records = build_records(
                    self._store.name, doc, chunks, indices=span, doc_hash=doc_hash
                )
            except Exception as error:
                self._failed_docs.add(doc.doc_id)
                reason = failure_reason("preparing the chunks of", error)
                count_failed(self._summary, doc.doc_id, reason)
                self._progress.file_done(doc.source)
                return
            last = span.stop == len(chunks)
            self._add(
                _Pending(
                    doc,
                    doc_hash,
                    records,
                    [None] * len(records),
                    stale,
                    last,
                    first=begin == 0,
                    chunk_count=len(chunks),
                )
            )

    def _add(self, item: _Pending) -> None:
        """Queue one part; a full group is embedded and handed to the writer."""
        self._group.append(item)
        self._group_chunks += len(item.records)
        if self._group_chunks >= self._chunks_per_group:
            self._flush()

    def close(self) -> None:
        """Write what is queued and wait for the writer."""
        try:
            self._flush()
            self._settle()
        finally:
            self._writer.shutdown(wait=True)

    def abandon(self) -> None:
        """After a failure: write nothing more, but account for a group already being written."""
        self._group, self._group_chunks = [], 0
        try:
            self._settle()
        except Exception:  # the failure being raised already says what went wrong
            pass
        finally:
            self._writer.shutdown(wait=True)

    def _flush(self) -> None:
        group, self._group, self._group_chunks = self._group, [], 0
        if not group:
            return
        for item in group:
            if item.stale:
                _reuse_vectors(self._store, item, self._summary)
        if self._embedder is None and any(v is None for item in group for v in item.vectors):
            self._embedder = self._make_embedder()
            _check_dimension(self._store, self._existing, self._embedder.dimension)
        if self._existing is None:
            self._existing = CollectionSettings(
                model=self._wanted.model,
                dimension=self._embedder.dimension if self._embedder is not None else 0,
                chunk_size=self._wanted.chunk_size,
                chunk_overlap=self._wanted.chunk_overlap,
                vector_index=self._wanted.vector_index,
                vectors=self._wanted.vectors,
            )
            self._store.create(self._existing)
        if self._embedder is not None:
            embedded = {id(item) for item in _embed_group(self._embedder, group, *self._report)}
            self._failed_docs.update(i.doc.doc_id for i in group if id(i) not in embedded)
            # Later parts of a failed document are not written either.
            group = [i for i in group if i.doc.doc_id not in self._failed_docs]
        self._settle()
        self._in_flight = (
            self._writer.submit(_write_group, self._store, group, self._failed_docs),
            group,
        )

    def _settle(self) -> None:
        """Account for the group the writer last took."""
        if self._in_flight is None:
            return
        future, group = self._in_flight
        self._in_flight = None
        result = future.result()
        self._summary.chunks_written += result.written
        self._summary.chunks_deleted += result.deleted
        for item in group:
            doc_id = item.doc.doc_id
            bad = result.failures.get(doc_id)
            if bad:
                reason = f"{len(bad)} chunk(s) not written: {bad[0].reason}"
                count_failed(self._summary, doc_id, reason)
            if item.last or bad:
                if doc_id not in self._failed_docs:
                    self.stored += 1
                self._progress.file_done(item.doc.source)


@dataclass
class _GroupResult:
    written: int = 0
    deleted: int = 0
    failures: dict[str, list[WriteFailure]] = field(default_factory=dict)


def _write_group(store: ChunkStore, group: list[_Pending], failed_docs: set[str]) -> _GroupResult:
    """Write a group, then delete the old versions of the documents stored without failure.

    `failed_docs` (documents with a failure in any part) is shared with the pipeline; this
    thread adds the documents whose writes fail.
    """
    records = [r for item in group for r in item.records]
    # float32 rows until here; lists (what the stores take) only for one group at a time.
    vectors = [v.tolist() for item in group for v in item.vectors if v is not None]
    result = _GroupResult()
    fault_point("write")
    # Incomplete until the last write below: a run killed in between leaves them listed so.
    store.begin_documents(
        [PendingDocument(i.doc.doc_id, i.doc_hash, i.chunk_count) for i in group if i.first]
    )
    for failure in store.write(records, vectors):
        result.failures.setdefault(failure.doc_id, []).append(failure)
    result.written = len(records) - sum(len(f) for f in result.failures.values())
    failed_docs.update(result.failures)
    for item in group:
        if item.last and item.doc.doc_id not in failed_docs:
            # Only now that the whole new version is stored may the old one go.
            if item.stale:
                fault_point("delete")
            result.deleted += store.delete_document(item.doc.doc_id, keep_doc_hash=item.doc_hash)
    store.finish_documents(
        [i.doc.doc_id for i in group if i.last and i.doc.doc_id not in failed_docs]
    )
    return result


def _check_dimension(
    store: ChunkStore, existing: CollectionSettings | None, dimension: int
) -> None:
    if existing is not None and existing.dimension and existing.dimension != dimension:
        raise SettingsMismatch(
            f"collection {store.name!r} holds {existing.dimension}-dimensional vectors but the "
            f"model gives {dimension}; use the collection's model or another "
            f"{setting('collection')}"
        )


def _reuse_vectors(store: ChunkStore, item: _Pending, summary: IngestSummary) -> None:
    """Chunks whose text did not change keep their stored vector: no embedding for them."""
    import numpy as np  # native code; `import stitcher` and --help do without it

    hashes = {r.chunk_hash for r in item.records}
    known = store.vectors_by_chunk_hash(item.doc.doc_id, hashes)
    for i, record in enumerate(item.records):
        vector = known.get(record.chunk_hash)
        if vector is not None:
            item.vectors[i] = np.asarray(vector, dtype=np.float32)
            summary.reused_vectors += 1


def _embed_group(
    embedder: DocumentEmbedder,
    group: list[_Pending],
    summary: IngestSummary,
    progress: IngestProgress,
) -> list[_Pending]:
    """Fill in missing vectors; returns the documents that have all of theirs.

    The embedder sorts the whole group by length (less padding). If it fails, each document is
    embedded on its own, so one document it cannot take fails alone (named in the summary) and
    the others are written.
    """
    fault_point("embed")
    try:
        _embed_missing(embedder, group, summary, progress)
        return group
    except StitcherError:
        raise  # the model itself (ModelError): every document would fail the same way
    except Exception as error:
        if len(group) == 1:
            count_failed(summary, group[0].doc.doc_id, failure_reason("embedding", error))
            progress.file_done(group[0].doc.source)
            return []
    kept = []
    for item in group:
        try:
            _embed_missing(embedder, [item], summary, progress)
            kept.append(item)
        except StitcherError:
            raise
        except Exception as error:
            count_failed(summary, item.doc.doc_id, failure_reason("embedding", error))
            progress.file_done(item.doc.source)
    return kept


def _embed_missing(
    embedder: DocumentEmbedder,
    group: list[_Pending],
    summary: IngestSummary,
    progress: IngestProgress,
) -> None:
    import numpy as np

    missing = [(item, i) for item in group for i, v in enumerate(item.vectors) if v is None]
    if not missing:
        return
    texts = [item.records[i].text for item, i in missing]
    # One float32 array per group; the rows handed out are views into it. The
    # sentence-transformers embedder gives the array directly (no Python floats in between).
    embed_array = getattr(embedder, "embed_array", None)
    raw = embed_array(texts) if callable(embed_array) else embedder.embed_documents(texts)
    vectors = np.asarray(raw, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != len(missing):
        raise ValueError(f"the embedder gave {vectors.shape} vectors for {len(missing)} texts")
    for (item, i), vector in zip(missing, vectors, strict=True):
        item.vectors[i] = vector
    summary.embedded += len(missing)
    progress.embedded(len(missing))
