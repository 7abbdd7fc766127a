"""What a run did, document by document: the IngestSummary a caller gets back, its `--json`
object and the one line a cron mail shows, and the wording of a document's failure.

Only the CLI prints `one_line` and `to_json` today; they stay beside the fields they read so a
Python caller (`Session.ingest` returns this object) can log the very line a cron mail shows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stitcher.errors import (
    ExitStatus,
    InputsUnreadable,
    PruneRefused,
    StitcherError,
    WriteFailed,
    exit_status_of_problems,
    worded,
)
from stitcher.faults import first_line
from stitcher.loaders import SkippedFile, describe_skipped


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


def failure_reason(stage: str, error: Exception) -> str:
    """Why one document failed, in one line (the CLI puts its name in front)."""
    reason = f"{type(error).__name__}: {first_line(error)}"
    if isinstance(error, UnicodeError) and "surrogate" in str(error):
        reason += " (the text holds a lone surrogate, e.g. from a broken PDF text layer)"
    return f"failed while {stage} the document: {reason}"


def count_failed(summary: IngestSummary, doc_id: str, reason: str) -> None:
    """Count a document as failed instead of added or updated."""
    summary.failed[doc_id] = reason
    for bucket in (summary.added, summary.updated):
        if doc_id in bucket:
            bucket.remove(doc_id)
