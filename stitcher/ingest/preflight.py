"""What a run checks before it writes anything: the options, the files it will load, the
collection's settings, and who owns each source.

Sources: every document belongs to one source, the first segment of its id ("docs/a/b.md" is
source "docs"). A source is a folder's name unless `--source` names it; the collection records
the folder each source is ingested from (`ChunkStore.register_source`), so another folder with
the same name is refused before anything is written, and `--prune` only ever looks at the
sources of this run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, TYPE_CHECKING

from stitcher.chunking import validate_chunk_settings
from stitcher.errors import SettingsMismatch, UsageError, setting
from stitcher.ingest.options import IngestOptions, IngestProgress
from stitcher.loaders import discover
from stitcher.models import CollectionSettings
from stitcher.store.base import ChunkStore

if TYPE_CHECKING:
    from stitcher.loaders import Discovery


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


def claim_sources(
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


def check_settings(store: ChunkStore, wanted: CollectionSettings) -> CollectionSettings | None:
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


def listing_subject(error: Exception) -> str:
    """The input a listing error is about: its message starts with the path, then ": "."""
    text = str(error)
    return text.split(": ", 1)[0] if ": " in text else text
