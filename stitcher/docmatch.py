"""`--doc NAME`: pick documents by a forgiving match on title, path or doc id — or say which.

Seed 000 asks the user a follow-up question when a name is ambiguous; stitcher lists the
candidates and exits 2 instead of guessing.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from stitcher.errors import AmbiguousError, UsageError, setting


@dataclass(frozen=True)
class DocumentName:
    """What a document can be called by."""

    doc_id: str
    title: str
    source: str

    def label(self) -> str:
        """'Title (doc id)' for candidate lists."""
        return f"{self.title} ({self.doc_id})" if self.title else self.doc_id


def _keys(doc: DocumentName) -> list[str]:
    stem = doc.doc_id.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return [k.casefold() for k in (doc.title, doc.doc_id, doc.source, stem) if k]


def match_documents(name: str, documents: Sequence[DocumentName]) -> list[DocumentName]:
    """The documents `name` refers to: exact matches win, then substrings, then close spellings."""
    wanted = name.strip().casefold()
    if not wanted:
        raise UsageError(f"{setting('doc')} needs a name")
    unique = {d.doc_id: d for d in documents}
    docs = list(unique.values())
    exact = [d for d in docs if wanted in _keys(d)]
    if exact:
        return exact
    partial = [d for d in docs if any(wanted in key for key in _keys(d))]
    if partial:
        return partial
    scored = []
    for d in docs:
        best = max(difflib.SequenceMatcher(None, wanted, key).ratio() for key in _keys(d))
        if best >= 0.75:
            scored.append((best, d))
    scored.sort(key=lambda pair: -pair[0])
    return [d for _, d in scored]


def resolve_document(name: str, documents: Sequence[DocumentName]) -> DocumentName:
    """Exactly one document for `name`; AmbiguousError (exit 2) listing candidates otherwise."""
    found = match_documents(name, documents)
    if len(found) == 1:
        return found[0]
    if not found:
        raise UsageError(f"no document matches {name!r}; `stitcher stats` lists the documents")
    listing = "\n".join(f"  {d.label()}" for d in found[:20])
    more = f"\n  … and {len(found) - 20} more" if len(found) > 20 else ""
    raise AmbiguousError(
        f"{name!r} matches {len(found)} documents; say which with a longer {setting('doc')}:\n"
        f"{listing}{more}"
    )
