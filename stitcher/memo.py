"""What each file's bytes loaded to last time, so a cron run does not load unchanged files again.

Deciding that a document is unchanged used to mean loading it (decoding, paragraph
reconstruction, language detection) and splitting it, only to compare the result's hash with
the stored one: at a million chunks that is most of an unchanged run. The memo remembers, per
document id, a *fingerprint* of everything loading depends on (the file's bytes, its sidecar's
bytes, the path as given, the load options, stitcher's version and text rules) together with
the document hash and chunk count that loading produced. When the fingerprint matches, ingest
takes the remembered hash and count instead of loading.

The memo is only ever a hint: ingest still compares the remembered hash and count with what
the collection holds (`stitcher.ingest.plan.is_complete`), so a stale, copied or wrong memo
costs a reload, never a skipped change. It lives under $STITCHER_HOME/memo, one SQLite file per
server and collection; any problem reading or writing it turns it off for the run with a
notice. How a run uses it is `stitcher.ingest.memo_use`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from stitcher import __version__, rules

Notice = Callable[[str], None]

#: Bytes read at a time when hashing a file.
_READ_SLICE = 1 << 20
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS memo ("
    "doc_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, doc_hash TEXT NOT NULL, "
    "chunks INTEGER NOT NULL)"
)


@dataclass(frozen=True)
class Remembered:
    """What a file with this fingerprint loaded to."""

    fingerprint: str
    doc_hash: str
    chunks: int


def load_options_key(
    tags: Sequence[str],
    tags_from_dirs: bool,
    chunk_size: int,
    chunk_overlap: int,
    mentions: Sequence[str] = (),
) -> str:
    """The options that change what loading and splitting a file give, as one string."""
    return repr((tuple(tags), tags_from_dirs, chunk_size, chunk_overlap, tuple(mentions)))


def file_fingerprint(path: Path, source: str, sidecar: Path | None, options_key: str) -> str:
    """Hash of everything a document's hash and chunk count depend on. Raises OSError."""
    digest = hashlib.sha256()
    for part in (__version__, rules.TEXT_RULES_VERSION, options_key, source):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\x00")
    _hash_file(digest, path)
    if sidecar is not None and sidecar.exists():
        digest.update(b"\x00sidecar\x00")
        _hash_file(digest, sidecar)
    return digest.hexdigest()


def _hash_file(digest: hashlib._Hash, path: Path) -> None:
    with path.open("rb") as handle:
        while block := handle.read(_READ_SLICE):
            digest.update(block)


class LoadMemo:
    """The memo of one collection on one server (see the module docstring)."""

    def __init__(self, path: Path, notice: Notice | None = None) -> None:
        self.path = path
        self._notice = notice or (lambda message: None)
        self._entries: dict[str, Remembered] | None = None
        self._pending: dict[str, Remembered] = {}
        self._forgotten: set[str] = set()
        self._broken = False

    def recall(self, doc_id: str) -> Remembered | None:
        """The remembered load of `doc_id`, if any (the whole memo is read on first use)."""
        if self._broken:
            return None
        if self._entries is None:
            try:
                self._entries = self._read_all()
            except (OSError, sqlite3.Error) as error:
                self._give_up("read", error)
                return None
        return self._entries.get(doc_id)

    def remember(self, doc_id: str, entry: Remembered) -> None:
        """Record a load confirmed to match what is stored (written by `save`)."""
        self._pending[doc_id] = entry
        self._forgotten.discard(doc_id)

    def forget(self, doc_ids: Iterable[str]) -> None:
        """Drop documents that are no longer stored (pruned)."""
        for doc_id in doc_ids:
            self._pending.pop(doc_id, None)
            self._forgotten.add(doc_id)

    def save(self) -> None:
        """Write what this run learnt; a failure only turns the memo off (with a notice)."""
        if self._broken or not (self._pending or self._forgotten):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with sqlite3.connect(self.path) as db:
                db.execute(_SCHEMA)
                db.executemany(
                    "INSERT OR REPLACE INTO memo VALUES (?, ?, ?, ?)",
                    [(k, e.fingerprint, e.doc_hash, e.chunks) for k, e in self._pending.items()],
                )
                db.executemany("DELETE FROM memo WHERE doc_id = ?", [(k,) for k in self._forgotten])
            db.close()
        except (OSError, sqlite3.Error) as error:
            self._give_up("write", error)
            return
        self._pending.clear()
        self._forgotten.clear()

    def _read_all(self) -> dict[str, Remembered]:
        if not self.path.exists():
            return {}
        db = sqlite3.connect(self.path)
        try:
            db.execute(_SCHEMA)
            rows = db.execute("SELECT doc_id, fingerprint, doc_hash, chunks FROM memo").fetchall()
        finally:
            db.close()
        return {doc_id: Remembered(fp, doc_hash, int(n)) for doc_id, fp, doc_hash, n in rows}

    def _give_up(self, action: str, error: Exception) -> None:
        self._broken = True
        self._notice(
            f"could not {action} the ingest memo {self.path} ({error}); every file is loaded "
            "this run (nothing else changes)"
        )
