"""The run's decisions about stored documents: which are stored exactly as loaded (unchanged),
and which of them --prune deletes, or why it deletes none.

Unchanged means one version, all of its chunks, under the current text rules (stitcher.rules):
a document stored under other rules is rebuilt, reusing the vectors of chunks whose text did
not change.

Prune is guarded: when a root could not be listed, listed no files, or more of a source's
documents would go than `--max-delete` allows, every add and update still happens but nothing
is deleted, and the summary carries the `PruneRefused` (exit code 4).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from stitcher import rules
from stitcher.errors import PruneRefused, setting
from stitcher.ingest.options import DeleteLimit
from stitcher.ingest.preflight import listing_subject
from stitcher.models import StoredDocument

if TYPE_CHECKING:
    from stitcher.loaders import Discovery


#: Names (documents, inputs) a prune refusal lists before "and N more".
_REFUSAL_SHOWN = 5


def prune_plan(
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
        # Named, not quoted: each error is reported on its own, and one can run to a long line.
        reasons.append(f"the listing had errors, about {_some(map(listing_subject, found.errors))}")
    for root, ids in sorted(by_root.items()):
        gone = [d for d in ids if d not in seen]
        if not gone or limit.allows(len(gone), len(ids)):
            continue
        listed = sum(1 for f in found.files if found.root_of(f.doc_id) == root)
        if listed == 0:
            reasons.append(f"the listing of source {root!r} found no files to load (not mounted?)")
        else:
            reasons.append(
                f"it would delete {len(gone)} of the {len(ids)} stored documents of source "
                f"{root!r}, more than {setting('max_delete', str(limit))} allows"
            )
    if not reasons:
        return vanished, None
    message = f"{setting('prune')} refused, nothing was deleted: {'; '.join(reasons)}."
    if vanished:
        message += f" It would have deleted {len(vanished)} document(s): {_some(vanished)}."
    if found.errors:
        message += f" Fix what could not be listed, or run without {setting('prune')}."
    else:
        message += (
            " If the files are really gone, run again with "
            f"{setting('max_delete', str(len(vanished)))} (or {setting('max_delete', '100%')})."
        )
    return [], PruneRefused(message)


def is_complete(previous: StoredDocument, doc_hash: str, chunk_count: int) -> bool:
    """Stored exactly as this version: one version only, all of its chunks, current rules, and
    not left incomplete by a run that stopped (its count alone could match: the old version's
    delete or the incomplete record's removal may be all that is missing)."""
    return (
        previous.complete
        and previous.doc_hashes == frozenset({doc_hash})
        and previous.chunk_count == chunk_count
        and previous.rules == frozenset({rules.TEXT_RULES_VERSION})
    )


def _some(names: Iterable[str]) -> str:
    """The first few names, and how many more there are."""
    listed = list(names)
    shown = ", ".join(listed[:_REFUSAL_SHOWN])
    if len(listed) > _REFUSAL_SHOWN:
        shown += f" and {len(listed) - _REFUSAL_SHOWN} more"
    return shown
