"""How one run uses the load memo (stitcher.memo): which files it need not load, and which
loads it may remember. The memo itself only stores; the policy of trusting it lives here, next
to the run, because it depends on the run's options and on what the collection holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from stitcher.graph.model import mentions_for
from stitcher.ingest.options import IngestOptions
from stitcher.ingest.plan import is_complete
from stitcher.loaders.metadata import SIDECAR_SUFFIX
from stitcher.memo import Remembered, file_fingerprint, load_options_key
from stitcher.models import StoredDocument

if TYPE_CHECKING:
    from stitcher.loaders.discovery import SourceFile
    from stitcher.memo import LoadMemo


class MemoUse:
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
            and is_complete(previous, entry.doc_hash, entry.chunks)
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
