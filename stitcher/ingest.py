"""discover → load → chunk → diff against the store → embed what is new → write → delete stale.

Weaviate is the source of truth: what is stored is read back at the start of every run (no local
record table to drift). The order of writes is what makes re-runs and crashes safe:

* a changed document gets new chunk ids (they hash the document version), so its new version is
  written completely and confirmed *before* the old version's chunks are deleted;
* a run killed half way leaves a partial new version next to the old one; the next run sees the
  version incomplete, rewrites it under the same ids (reusing stored vectors, so it costs no
  embeddings) and only then deletes the rest;
* nothing is deleted for a document whose new version had any write failure.

Sources: every document belongs to one source, the first segment of its id ("docs/a/b.md" is
source "docs"). A source is a folder's name unless `--source` names it; the collection records
the folder each source is ingested from (`ChunkStore.register_source`), so another folder with
the same name is refused before anything is written, and `--prune` only ever looks at the
sources of this run.

Prune is guarded: when a root could not be listed, listed no files, or more of a source's
documents would go than `--max-delete` allows, every add and update still happens but nothing
is deleted, and the summary carries the `PruneRefused` (exit code 4).

Text rules: a document stored under other text rules (stitcher.rules) is not "unchanged": it is
rebuilt, reusing the vectors of chunks whose text did not change.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import IO, TYPE_CHECKING, Any, Protocol, overload

from stitcher import loaders, rules
from stitcher.chunking import split_spans, validate_chunk_settings
from stitcher.errors import (
    ExitStatus,
    InputsUnreadable,
    PruneRefused,
    SettingsMismatch,
    StitcherError,
    UsageError,
    WriteFailed,
    exit_status_of_problems,
    setting,
    worded,
)
from stitcher.faults import ServerFault, fault_point, first_line
from stitcher.graph.model import mentions_for
from stitcher.ids import build_records
from stitcher.loaders import EmptyDocument, SkippedFile, describe_skipped, discover
from stitcher.loaders.decoding import noted_repairs
from stitcher.loaders.metadata import SIDECAR_SUFFIX
from stitcher.memo import Remembered, file_fingerprint, load_options_key
from stitcher.models import (
    VECTOR_INDEX_HNSW,
    Chunk,
    ChunkRecord,
    CollectionSettings,
    Document,
    PendingDocument,
    StoredDocument,
    WriteFailure,
)
from stitcher.store.base import ChunkStore

if TYPE_CHECKING:
    import numpy as np

    from stitcher.loaders import Discovery
    from stitcher.loaders.discovery import SourceFile
    from stitcher.memo import LoadMemo, Remembered

#: Embedding batches per write group. A group is embedded, then uploaded while the next group is
#: embedded; several batches per group let the embedder sort chunks by length (less padding).
BATCHES_PER_GROUP = 8

#: Documents with unresolved mentions listed one by one in the notices (all are in --json).
_UNRESOLVED_SHOWN = 10

#: Document names a prune refusal lists before "and N more".
_REFUSAL_SHOWN = 5


@dataclass(frozen=True)
class DeleteLimit:
    """How many of a source's stored documents one `--prune` run may delete.

    `count`: at most this many documents per source; `percent`: at most this share of the
    source's stored documents (those the listing covers). The default allows half.
    """

    count: int | None = None
    percent: float | None = 50.0

    @classmethod
    def parse(cls, text: str) -> DeleteLimit:
        """ "N" (documents) or "P%" (of each source's stored documents); UsageError otherwise."""
        value = text.strip()
        try:
            if value.endswith("%"):
                percent = float(value[:-1])
                if 0 <= percent <= 100:
                    return cls(count=None, percent=percent)
            elif int(value) >= 0:
                return cls(count=int(value), percent=None)
        except ValueError:
            pass
        raise UsageError(
            f"{setting('max_delete', text)}: give a number of documents (e.g. 20) or a "
            "percentage of each source's stored documents (e.g. 10%, 100%)"
        )

    def allows(self, deleting: int, stored: int) -> bool:
        """Whether deleting `deleting` of `stored` documents stays within the limit."""
        if self.count is not None and deleting > self.count:
            return False
        return not (self.percent is not None and deleting * 100 > self.percent * stored)

    def __str__(self) -> str:
        if self.count is not None:
            return str(self.count)
        return f"{self.percent:g}%"


class DocumentEmbedder(Protocol):
    """What ingest needs from an embedder (stitcher.embed.SentenceTransformerEmbedder)."""

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """One vector per text; a float32 array of shape (len(texts), dimension) is best."""
        ...


class IngestProgress(Protocol):
    """Callbacks for a progress display; all optional to act on."""

    def planned(self, files: int) -> None: ...

    def file_done(self, source: str) -> None: ...

    def embedded(self, chunks: int) -> None: ...

    def notice(self, message: str) -> None: ...


class SilentProgress:
    """Progress that shows nothing (the library default); subclass to show some of it."""

    def planned(self, files: int) -> None:
        pass

    def file_done(self, source: str) -> None:
        pass

    def embedded(self, chunks: int) -> None:
        pass

    def notice(self, message: str) -> None:
        pass


@dataclass(frozen=True)
class IngestOptions:
    """Everything `stitcher ingest` can be told, minus where the server is."""

    chunk_size: int = 250
    chunk_overlap: int = 50
    glob: str | None = None
    prune: bool = False
    dry_run: bool = False
    tags: tuple[str, ...] = ()
    tags_from_dirs: bool = False
    batch_size: int = 32
    #: Names each document mentions, by doc id or path (stitcher.graph.read_mentions_file);
    #: added to the `mentions` of its front matter.
    mentions: Mapping[str, Sequence[str]] | None = None
    #: The source the documents belong to (first segment of their ids); None: each folder's
    #: own name. Naming it also re-attaches a source to a folder it was not registered from.
    source: str | None = None
    #: What --prune may delete before it refuses (PruneRefused); None: the default, 50%.
    max_delete: DeleteLimit | None = None
    #: Where the embedder runs (stitcher.embed.DEVICES); nothing about it is stored: cpu and
    #: cuda vectors of one model agree within float tolerance.
    device: str = "auto"
    #: Encode processes (stitcher.embed.EncodePool); 1 embeds in this process.
    workers: int = 1


@dataclass
class IngestSummary:
    """What a run did, per document (added/updated/...) and per chunk (written/embedded)."""

    collection: str
    #: The tenant ingested into, for a multi-tenant collection.
    tenant: str | None = None
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    #: Of `updated`: documents stored under other text rules (stitcher.rules), rebuilt.
    rebuilt: list[str] = field(default_factory=list)
    #: Files with no text (placeholders): skipped with a notice, not an error.
    empty: list[str] = field(default_factory=list)
    #: Set when pruning refused to delete (nothing was deleted): ExitStatus.PRUNE_REFUSED.
    prune_refused: PruneRefused | None = None
    #: Files found under the folders and not loaded, each with the reason (not an error).
    skipped: list[SkippedFile] = field(default_factory=list)
    chunks_written: int = 0
    embedded: int = 0
    reused_vectors: int = 0
    chunks_deleted: int = 0
    seconds: float = 0.0
    dry_run: bool = False
    #: Names in a document's `mentions` that no loaded organization has (kept as text).
    unresolved_mentions: dict[str, list[str]] = field(default_factory=dict)
    #: The messages of `unreadable` by the same keys, the settings they name not yet spelled
    #: (stitcher.errors.setting): `problems` spells them as its caller wants.
    _unworded: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def unreadable_because(self, name: str, error: StitcherError) -> None:
        """Count input `name` as unreadable for the reason `error` gives."""
        self.unreadable[name] = str(error)
        self._unworded[name] = error.unworded

    def problems(self, wording: Callable[[str], str] = worded) -> dict[str, str]:
        """Every unreadable input's and failed document's message by name, the settings they
        name spelled by `wording` (the CLI: as its flags; by default as the library's names)."""
        spelled = {name: wording(text) for name, text in self._unworded.items()}
        return {**self.unreadable, **spelled, **self.failed}

    @property
    def changed(self) -> bool:
        """Whether the run changed (or, dry, would change) what the collection holds."""
        return bool(self.added or self.updated or self.deleted)

    @property
    def exit_status(self) -> ExitStatus:
        """What the run's outcome means for a script: some documents not stored beats a refused
        prune beats unreadable inputs (empty files are not an error)."""
        problems: list[type[StitcherError]] = []
        if self.failed:
            problems.append(WriteFailed)
        if self.prune_refused is not None:
            problems.append(PruneRefused)
        if self.unreadable:
            problems.append(InputsUnreadable)
        return exit_status_of_problems(problems)

    def to_json(self) -> dict[str, Any]:
        """The `--json` object: counts of documents, chunk counters, and the problems by name."""
        return {
            "collection": self.collection,
            **({"tenant": self.tenant} if self.tenant is not None else {}),
            "added": len(self.added),
            "updated": len(self.updated),
            "rebuilt": len(self.rebuilt),
            "unchanged": len(self.unchanged),
            "deleted": len(self.deleted),
            "failed": len(self.failed),
            "unreadable": len(self.unreadable),
            "empty": len(self.empty),
            "skipped": len(self.skipped),
            "prune_refused": str(self.prune_refused) if self.prune_refused else None,
            "chunks_written": self.chunks_written,
            "embedded": self.embedded,
            "reused_vectors": self.reused_vectors,
            "chunks_deleted": self.chunks_deleted,
            "seconds": round(self.seconds, 3),
            "dry_run": self.dry_run,
            "errors": {**self.unreadable, **self.failed},
            "unresolved_mentions": self.unresolved_mentions,
            "documents": {
                "added": self.added,
                "updated": self.updated,
                "rebuilt": self.rebuilt,
                "deleted": self.deleted,
                "empty": self.empty,
            },
            "skipped_files": [
                {"file": item.source, "type": item.kind, "reason": item.reason}
                for item in self.skipped
            ],
        }

    def one_line(self) -> str:
        """The summary a cron mail shows."""
        verb = "would be" if self.dry_run else ""
        updated = f"{len(self.updated)} updated"
        if self.rebuilt:
            updated += f" ({len(self.rebuilt)} rebuilt for new text rules)"
        parts = [
            f"{len(self.added)} added",
            updated,
            f"{len(self.unchanged)} unchanged",
            f"{len(self.deleted)} deleted",
            f"{len(self.failed)} failed",
        ]
        if self.unreadable:
            parts.append(f"{len(self.unreadable)} unreadable")
        if self.empty:
            parts.append(f"{len(self.empty)} empty")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped: {describe_skipped(self.skipped)}")
        if self.prune_refused is not None:
            parts.append("prune refused")
        if self.unresolved_mentions:
            count = sum(len(names) for names in self.unresolved_mentions.values())
            parts.append(f"{count} unresolved mention(s)")
        where = self.collection if self.tenant is None else f"{self.collection} ({self.tenant})"
        head = f"{where}: " + ", ".join(parts)
        if verb:
            return head + " (dry run: nothing was written)"
        return (
            f"{head}; {self.chunks_written} chunks written, {self.embedded} embedded, "
            f"{self.reused_vectors} vectors reused in {self.seconds:.1f}s"
        )


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


class _Chunks(Sequence[Chunk]):
    """A document's chunks kept as offsets (16 bytes each, not a Chunk and its text apiece);
    a Chunk is made when asked for. The text of a 200 MB document is ~1M chunks."""

    def __init__(self, text: str, starts: array[int], ends: array[int]) -> None:
        self._text = text
        self._starts = starts
        self._ends = ends

    @classmethod
    def split(cls, text: str, chunk_size: int, chunk_overlap: int) -> _Chunks:
        starts: array[int] = array("q")
        ends: array[int] = array("q")
        for start, end in split_spans(text, chunk_size, chunk_overlap):
            starts.append(start)
            ends.append(end)
        return cls(text, starts, ends)

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> Chunk: ...

    @overload
    def __getitem__(self, index: slice) -> list[Chunk]: ...

    def __getitem__(self, index: int | slice) -> Chunk | list[Chunk]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        start, end = self._starts[index], self._ends[index]
        return Chunk(index, start, end, self._text[start:end])


def ingest(
    store: ChunkStore,
    paths: Sequence[str],
    *,
    model_name: str,
    vector_index: str = VECTOR_INDEX_HNSW,
    embedder: Callable[[], DocumentEmbedder],
    options: IngestOptions = IngestOptions(),
    stdin: IO[str] | None = None,
    progress: IngestProgress | None = None,
    memo: LoadMemo | None = None,
    discovered: Discovery | None = None,
) -> IngestSummary:
    """Bring `store` in line with the documents under `paths`.

    `embedder` is called only when some chunk needs a vector, so a run over unchanged documents
    never loads the model. With a `memo` (stitcher.memo), a file whose bytes, sidecar and
    options are those of a load the collection still holds is not loaded again.

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
    )
    existing_settings = _check_settings(store, wanted)

    for error in found.errors:
        summary.unreadable_because(_error_subject(error), error)
    summary.skipped = list(found.skipped)
    if found.skipped:
        progress.notice(
            f"{len(found.skipped)} skipped (not loaded): {describe_skipped(found.skipped)}"
        )
    _claim_sources(store, found, existing_settings is not None, options, progress)
    stored = store.documents() if existing_settings is not None else {}
    progress.planned(len(found.files))

    empty: set[str] = set()
    pipeline = None
    recall = _MemoUse(memo, options)
    if not options.dry_run:
        pipeline = _Pipeline(store, wanted, existing_settings, embedder, options, summary, progress)
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
            try:
                # looked up at each call: tests count the loads by wrapping it (test_memo.py)
                with noted_repairs() as repairs:
                    doc = loaders.load(
                        src, extra_tags=options.tags, tags_from_dirs=options.tags_from_dirs
                    )
            except EmptyDocument as notice:
                # A placeholder is no error; under --prune its stored version counts as gone.
                empty.add(src.doc_id)
                summary.empty.append(src.doc_id)
                progress.notice(str(notice))
                progress.file_done(src.source)
                continue
            except StitcherError as error:
                summary.unreadable_because(src.source, error)
                progress.file_done(src.source)
                continue
            except Exception as error:  # a reader's bug or a malformed file: this one fails
                summary.failed[src.doc_id] = _failure("reading", error)
                progress.file_done(src.source)
                continue
            for repair in repairs:
                progress.notice(repair)
            try:
                if options.mentions:
                    doc = _with_mentions(doc, options.mentions)
                chunks = _Chunks.split(doc.text, options.chunk_size, options.chunk_overlap)
                doc_hash = doc.doc_hash  # encodes the text: fails on a lone surrogate
            except Exception as error:
                summary.failed[doc.doc_id] = _failure("splitting and hashing", error)
                progress.file_done(src.source)
                continue
            fault_point("read")
            recall.loaded(src, doc_hash, len(chunks))
            if previous is not None and _is_complete(previous, doc_hash, len(chunks)):
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
        seen = {src.doc_id for src in found.files} - empty
        vanished, summary.prune_refused = _prune_plan(
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


def list_documents(
    paths: Sequence[str], options: IngestOptions, stdin: IO[str] | None = None
) -> Discovery:
    """The documents an ingest of `paths` loads, for `ingest(..., discovered=)`: a caller that
    locks the sources it writes (`sources_of`) lists them first, and that listing is then the
    one loaded, so the lock covers everything written. Reads stdin when `paths` has "-".

    Raises UsageError for options that cannot work, before anything is read.
    """
    validate_chunk_settings(options.chunk_size, options.chunk_overlap)
    if not paths:
        raise UsageError(
            "nothing to ingest: give one or more files or directories (or - for stdin)"
        )
    if options.source is not None:
        _check_source_option(options.source, paths)
    return discover(paths, glob=options.glob, stdin=stdin, source=options.source)


def sources_of(found: Discovery) -> list[str]:
    """The sources an ingest of `found` writes into and prunes from (the first segment of each
    root's document ids), sorted; empty when nothing was found."""
    return sorted({root.split("/", 1)[0] for root in found.roots})


def _check_source_option(source: str, paths: Sequence[str]) -> None:
    """--source names one folder's (or file's) documents; it must be usable as an id prefix."""
    if not source.strip() or source != source.strip() or source in (".", ".."):
        raise UsageError(
            f"{setting('source', source)}: give a name such as {setting('source', 'manuals')}"
        )
    if "/" in source or any(ord(c) < 32 for c in source):
        raise UsageError(
            f"{setting('source', source)}: a source name cannot contain '/' or control codes"
        )
    if len(paths) != 1 or paths[0] == "-":
        raise UsageError(
            f"{setting('source')} names the documents of one folder: give exactly one PATH "
            f"(not -), and run once per folder, each with its own {setting('source')}"
        )


def _claim_sources(
    store: ChunkStore,
    found: Discovery,
    collection_exists: bool,
    options: IngestOptions,
    progress: IngestProgress,
) -> None:
    """Check that no other folder already owns this run's sources, then record them.

    Raises UsageError (nothing written) when a folder would take over the source of another
    folder with the same name; an explicit --source moves the source instead. Documents stored
    before sources were recorded belong to the source of their id's first segment, so the first
    folder to claim that name takes them over.
    """
    registered = store.source_roots() if collection_exists else {}
    claims: dict[str, str] = {}
    for name, folder in sorted(found.folders.items()):
        previous = registered.get(name)
        if previous == folder:
            continue
        if previous is not None and options.source is None:
            raise UsageError(
                f"source {name!r} of collection {store.name!r} is the folder {previous}, not "
                f"{folder}: both would share document ids ({name}/...) and {setting('prune')} "
                "would delete each other's documents. Give this folder its own name with "
                f"{setting('source', 'NAME')}; or, if the folder moved, re-attach it with "
                f"{setting('source', name)}"
            )
        if previous is not None:
            progress.notice(f"source {name!r}: moved from {previous} to {folder}")
        claims[name] = folder
    if options.dry_run:
        return
    for name, folder in claims.items():
        store.register_source(name, folder)


def _prune_plan(
    stored: Mapping[str, StoredDocument], seen: set[str], found: Discovery, limit: DeleteLimit
) -> tuple[list[str], PruneRefused | None]:
    """The stored documents to delete, or a refusal (then nothing is deleted at all): when the
    listing had errors (a root missing or unreadable), a root listed no files, or more of a
    source would go than `limit` allows."""
    by_root: dict[str, list[str]] = {}
    for doc_id in stored:
        root = found.root_of(doc_id)
        if root is not None:
            by_root.setdefault(root, []).append(doc_id)
    vanished = sorted(d for ids in by_root.values() for d in ids if d not in seen)
    reasons: list[str] = []
    if found.errors:
        reasons.append(f"the listing had errors ({found.errors[0].unworded})")
    for root, ids in sorted(by_root.items()):
        gone = [d for d in ids if d not in seen]
        if not gone or limit.allows(len(gone), len(ids)):
            continue
        listed = sum(1 for f in found.files if found.root_of(f.doc_id) == root)
        if listed == 0:
            reasons.append(f"the listing of source {root!r} found no files (not mounted?)")
        else:
            reasons.append(
                f"it would delete {len(gone)} of the {len(ids)} stored documents of source "
                f"{root!r}, more than {setting('max_delete', str(limit))} allows"
            )
    if not reasons:
        return vanished, None
    message = f"{setting('prune')} refused, nothing was deleted: {'; '.join(reasons)}."
    if vanished:
        names = ", ".join(vanished[:_REFUSAL_SHOWN])
        if len(vanished) > _REFUSAL_SHOWN:
            names += f" and {len(vanished) - _REFUSAL_SHOWN} more"
        message += f" It would have deleted {len(vanished)} document(s): {names}."
    if found.errors:
        message += f" Fix what could not be listed, or run without {setting('prune')}."
    else:
        message += (
            " If the files are really gone, run again with "
            f"{setting('max_delete', str(len(vanished)))} (or {setting('max_delete', '100%')})."
        )
    return [], PruneRefused(message)


def _with_mentions(doc: Document, mapping: Mapping[str, Sequence[str]]) -> Document:
    """The document with the names `mapping` gives it added to its `mentions`."""
    extra = mentions_for(doc.doc_id, doc.source, mapping)
    if not extra:
        return doc
    own = doc.metadata.get("mentions") or []
    own = [own] if isinstance(own, str) else list(own)
    merged = list(dict.fromkeys([*own, *extra]))
    return replace(doc, metadata={**doc.metadata, "mentions": merged})


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


def _check_settings(store: ChunkStore, wanted: CollectionSettings) -> CollectionSettings | None:
    """The collection's settings, refusing to mix chunk settings or models in one collection."""
    if not store.exists():
        return None
    existing = store.settings()
    if existing is None:
        raise SettingsMismatch(
            f"collection {store.name!r} was not created by stitcher (no settings recorded on it); "
            f"ingest into another {setting('collection')}, or convert it first with "
            "`stitcher adopt`"
        )
    differences = existing.refusals(
        model=wanted.model, chunk_size=wanted.chunk_size, chunk_overlap=wanted.chunk_overlap
    )
    if differences:
        raise SettingsMismatch(
            f"collection {store.name!r} was built with other settings: "
            + "; ".join(differences)
            + f". Use the collection's settings, choose another {setting('collection')}, or "
            "delete it "
            f"(`stitcher drop --collection {store.name} --yes`) and ingest again."
        )
    return existing


class _MemoUse:
    """One run's use of the load memo: recall before loading, remember what was confirmed.

    A load is remembered only once the collection is known to hold exactly it (found
    unchanged, or written without failure), and saved at the end of a run that got that far:
    a run stopped by a fault learns nothing, which only costs the next run some loading. The
    file is fingerprinted before and after loading, and a load is remembered only when both
    agree, so a file edited while it was being read never pairs one version's bytes with the
    other version's hash.
    """

    def __init__(self, memo: LoadMemo | None, options: IngestOptions) -> None:
        self._memo = None if options.dry_run else memo
        self._options = options
        self._before: dict[str, str | None] = {}
        self._loaded: dict[str, Remembered] = {}

    def unchanged(self, src: SourceFile, previous: StoredDocument | None) -> bool:
        """True when the memo shows `src` loads to exactly the stored version. Called before
        loading every file: its fingerprint now is what a load is remembered under."""
        if self._memo is None:
            return False
        fingerprint = self._before[src.doc_id] = self._fingerprint(src)
        if previous is None or fingerprint is None:
            return False
        entry = self._memo.recall(src.doc_id)
        return (
            entry is not None
            and entry.fingerprint == fingerprint
            and _is_complete(previous, entry.doc_hash, entry.chunks)
        )

    def loaded(self, src: SourceFile, doc_hash: str, chunks: int) -> None:
        """What loading `src` gave (remembered if the collection turns out to hold it)."""
        if self._memo is None:
            return
        before = self._before.pop(src.doc_id, None)
        after = self._fingerprint(src)
        if before is not None and before == after:
            self._loaded[src.doc_id] = Remembered(after, doc_hash, chunks)

    def confirm(self, doc_id: str) -> None:
        """The collection holds the load of `doc_id` made this run."""
        entry = self._loaded.pop(doc_id, None)
        if self._memo is not None and entry is not None:
            self._memo.remember(doc_id, entry)

    def forget(self, doc_ids: Sequence[str]) -> None:
        if self._memo is not None:
            self._memo.forget(doc_ids)

    def save(self) -> None:
        if self._memo is not None:
            self._memo.save()

    def _fingerprint(self, src: SourceFile) -> str | None:
        """The file's fingerprint (stitcher.memo); None for a file that cannot be read (loading
        then says what is wrong with it)."""
        mentions: Sequence[str] = ()
        if self._options.mentions:
            mentions = mentions_for(src.doc_id, src.source, self._options.mentions)
        key = load_options_key(
            self._options.tags,
            self._options.tags_from_dirs,
            self._options.chunk_size,
            self._options.chunk_overlap,
            mentions,
        )
        sidecar = src.path.with_name(src.path.name + SIDECAR_SUFFIX)
        try:
            return file_fingerprint(src.path, src.source, sidecar, key)
        except OSError:
            return None


def _is_complete(previous: StoredDocument, doc_hash: str, chunk_count: int) -> bool:
    """Stored exactly as this version: one version only, all of its chunks, current rules, and
    not left incomplete by a run that stopped (its count alone could match: the old version's
    delete or the incomplete record's removal may be all that is missing)."""
    return (
        previous.complete
        and previous.doc_hashes == frozenset({doc_hash})
        and previous.chunk_count == chunk_count
        and previous.rules == frozenset({rules.TEXT_RULES_VERSION})
    )


def _failure(stage: str, error: Exception) -> str:
    """Why one document failed, in one line (the CLI puts its name in front)."""
    reason = f"{type(error).__name__}: {first_line(error)}"
    if isinstance(error, UnicodeError) and "surrogate" in str(error):
        reason += " (the text holds a lone surrogate, e.g. from a broken PDF text layer)"
    return f"failed while {stage} the document: {reason}"


def _error_subject(error: Exception) -> str:
    text = str(error)
    return text.split(": ", 1)[0] if ": " in text else text


class _Pipeline:
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
                _fail(self._summary, doc.doc_id, _failure("preparing the chunks of", error))
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
                _fail(self._summary, doc_id, f"{len(bad)} chunk(s) not written: {bad[0].reason}")
            if item.last or bad:
                if doc_id not in self._failed_docs:
                    self.stored += 1
                self._progress.file_done(item.doc.source)


def _fail(summary: IngestSummary, doc_id: str, reason: str) -> None:
    """Count a document as failed instead of added or updated."""
    summary.failed[doc_id] = reason
    for bucket in (summary.added, summary.updated):
        if doc_id in bucket:
            bucket.remove(doc_id)


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
            _fail(summary, group[0].doc.doc_id, _failure("embedding", error))
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
            _fail(summary, item.doc.doc_id, _failure("embedding", error))
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
