"""discover → load → chunk → diff against the store → embed what is new → write → delete stale.

Weaviate is the source of truth: what is stored is read back at the start of every run (no local
record table to drift). The order of writes is what makes re-runs and crashes safe:

* a changed document gets new chunk ids (they hash the document version), so its new version is
  written completely and confirmed *before* the old version's chunks are deleted;
* a run killed half way leaves a partial new version next to the old one; the next run sees the
  version incomplete, rewrites it under the same ids (reusing stored vectors, so it costs no
  embeddings) and only then deletes the rest;
* nothing is deleted for a document whose new version had any write failure.

Before anything is written the run checks its options, the collection's settings and who owns
each source (`preflight.py`, which also tells what a source is).

What counts as unchanged, and when --prune deletes nothing, is decided in `plan.py`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING

from stitcher import loaders, rules
from stitcher.errors import StitcherError, setting
from stitcher.faults import ServerFault, fault_point
from stitcher.ingest.documents import Chunks, with_mentions
from stitcher.ingest.memo_use import MemoUse
from stitcher.ingest.options import (
    DeleteLimit,
    DocumentEmbedder,
    IngestOptions,
    IngestProgress,
    SilentProgress,
)
from stitcher.ingest.pipeline import Pipeline
from stitcher.ingest.plan import is_complete, prune_plan
from stitcher.ingest.preflight import (
    check_settings,
    claim_sources,
    list_documents,
    listing_subject,
)
from stitcher.ingest.summary import IngestSummary, failure_reason
from stitcher.loaders import EmptyDocument, describe_skipped
from stitcher.loaders.decoding import noted_repairs
from stitcher.models import VECTOR_INDEX_HNSW, VECTORS_SINGLE, CollectionSettings
from stitcher.store.base import ChunkStore

if TYPE_CHECKING:
    from stitcher.loaders import Discovery
    from stitcher.loaders.discovery import SourceFile
    from stitcher.memo import LoadMemo
    from stitcher.models import Document


#: A frozen dataclass, so one instance serves every call that passes no options.
_DEFAULT_OPTIONS = IngestOptions()

#: Documents with unresolved mentions listed one by one in the notices (all are in --json).
_UNRESOLVED_SHOWN = 10


def ingest(
    store: ChunkStore,
    paths: Sequence[str],
    *,
    model_name: str,
    vector_index: str = VECTOR_INDEX_HNSW,
    vectors: str = VECTORS_SINGLE,
    embedder: Callable[[], DocumentEmbedder],
    options: IngestOptions = _DEFAULT_OPTIONS,
    stdin: IO[str] | None = None,
    progress: IngestProgress | None = None,
    memo: LoadMemo | None = None,
    discovered: Discovery | None = None,
) -> IngestSummary:
    """Bring `store` in line with the documents under `paths`.

    A collection this run creates gets `vector_index` and the vector layout `vectors`
    (stitcher.store.vectors); an existing one keeps its own. `embedder` is called only when
    some chunk needs a vector, so a run over unchanged documents never loads the model.
    With a `memo` (stitcher.memo), a file whose bytes, sidecar and options are those of a load
    the collection still holds is not loaded again.

    Raises StitcherError for problems with the whole run (settings mismatch, bad options, a
    source name taken by another folder) before anything is written; per-file problems, and a
    refused prune, are reported in the summary.
    """
    found = list_documents(paths, options, stdin) if discovered is None else discovered
    progress = progress or SilentProgress()
    started = time.monotonic()
    summary = IngestSummary(collection=store.name, tenant=store.tenant, dry_run=options.dry_run)

    wanted = CollectionSettings(
        model=model_name,
        dimension=0,  # unknown until the model is loaded; checked then
        chunk_size=options.chunk_size,
        chunk_overlap=options.chunk_overlap,
        vector_index=vector_index,
        vectors=vectors,
    )
    existing_settings = check_settings(store, wanted)

    for error in found.errors:
        summary.unreadable_because(listing_subject(error), error)
    summary.skipped = list(found.skipped)
    if found.skipped:
        progress.notice(
            f"{len(found.skipped)} skipped (not loaded): {describe_skipped(found.skipped)}"
        )
    claim_sources(store, found, existing_settings is not None, options, progress)
    stored = store.documents() if existing_settings is not None else {}
    progress.planned(len(found.files))

    pipeline = None
    recall = MemoUse(memo, options)
    if not options.dry_run:
        pipeline = Pipeline(store, wanted, existing_settings, embedder, options, summary, progress)
    checked = 0
    try:
        for src in found.files:
            checked += 1
            previous = stored.get(src.doc_id)
            if recall.unchanged(src, previous):
                fault_point("read")
                summary.unchanged.append(src.doc_id)
                progress.file_done(src.source)
                continue
            loaded = _load(src, options, summary, progress)
            if loaded is None:
                progress.file_done(src.source)
                continue
            doc, doc_hash, chunks = loaded
            fault_point("read")
            recall.loaded(src, doc_hash, len(chunks))
            if previous is not None and is_complete(previous, doc_hash, len(chunks)):
                recall.confirm(doc.doc_id)
                summary.unchanged.append(doc.doc_id)
                progress.file_done(src.source)
                continue
            if previous is not None and previous.rules != {rules.TEXT_RULES_VERSION}:
                summary.rebuilt.append(doc.doc_id)
            if pipeline is None:  # dry run: decided, nothing to write
                (summary.updated if previous is not None else summary.added).append(doc.doc_id)
                progress.file_done(src.source)
                continue
            (summary.updated if previous is not None else summary.added).append(doc.doc_id)
            pipeline.add_document(doc, doc_hash, chunks, stale=previous is not None)
            del doc, chunks  # the pipeline holds what it still needs
        if pipeline is not None:
            pipeline.close()
    except ServerFault as fault:
        if pipeline is not None:
            pipeline.abandon()
        stored_now = pipeline.stored if pipeline is not None else 0
        queued = len(summary.added) + len(summary.updated) - stored_now
        raise fault.with_progress(stored_now, queued, len(found.files) - checked) from None
    except BaseException:
        if pipeline is not None:
            pipeline.abandon()
        raise
    # Counted among the updated only: a document whose rebuild failed is reported as failed.
    summary.rebuilt = [doc_id for doc_id in summary.rebuilt if doc_id in summary.updated]
    if not options.dry_run:
        for doc_id in (*summary.added, *summary.updated):  # the failed are in neither
            recall.confirm(doc_id)

    vanished: list[str] = []
    if options.prune:
        # An empty file is a placeholder: under --prune its stored version counts as gone.
        seen = {src.doc_id for src in found.files} - set(summary.empty)
        vanished, summary.prune_refused = prune_plan(
            stored, seen, found, options.max_delete or DeleteLimit()
        )
    if options.dry_run:
        summary.deleted = vanished
        summary.seconds = time.monotonic() - started
        return summary

    if summary.added or summary.updated or summary.failed:
        _report_unresolved_mentions(store, summary, progress)
    try:
        for doc_id in vanished:
            fault_point("prune")
            summary.chunks_deleted += store.delete_document(doc_id)
            summary.deleted.append(doc_id)
    finally:
        recall.forget(summary.deleted)
        recall.save()
    summary.seconds = time.monotonic() - started
    return summary


def _load(
    src: SourceFile, options: IngestOptions, summary: IngestSummary, progress: IngestProgress
) -> tuple[Document, str, Chunks] | None:
    """The file loaded and split, with its document hash; None when it cannot be (the summary
    then says why: empty, unreadable or failed)."""
    try:
        # looked up at each call: tests count the loads by wrapping it (test_memo.py)
        with noted_repairs() as repairs:
            doc = loaders.load(src, extra_tags=options.tags, tags_from_dirs=options.tags_from_dirs)
    except EmptyDocument as notice:
        summary.empty.append(src.doc_id)  # a placeholder is no error
        progress.notice(str(notice))
        return None
    except StitcherError as error:
        summary.unreadable_because(src.source, error)
        return None
    except Exception as error:  # a reader's bug or a malformed file: this one fails
        summary.failed[src.doc_id] = failure_reason("reading", error)
        return None
    for repair in repairs:
        progress.notice(repair)
    try:
        if options.mentions:
            doc = with_mentions(doc, options.mentions)
        chunks = Chunks.split(doc.text, options.chunk_size, options.chunk_overlap)
        doc_hash = doc.doc_hash  # encodes the text: fails on a lone surrogate
    except Exception as error:
        summary.failed[doc.doc_id] = failure_reason("splitting and hashing", error)
        return None
    return doc, doc_hash, chunks


def _report_unresolved_mentions(
    store: ChunkStore, summary: IngestSummary, progress: IngestProgress
) -> None:
    """Stores that link `mentions` to entities (WeaviateStore) say which names matched none."""
    summary.unresolved_mentions = dict(sorted(store.take_unresolved_mentions().items()))
    listed = list(summary.unresolved_mentions.items())
    for doc_id, names in listed[:_UNRESOLVED_SHOWN]:
        progress.notice(f"{doc_id}: no organization named {', '.join(map(repr, names))}")
    if len(listed) > _UNRESOLVED_SHOWN:
        progress.notice(
            f"... and {len(listed) - _UNRESOLVED_SHOWN} more documents (all of them: "
            f"{setting('as_json')}, under unresolved_mentions)"
        )
    if listed:
        progress.notice(
            "unresolved mentions are kept as text; `stitcher entities load FILE` links them once "
            "an organization has that name or alias"
        )
