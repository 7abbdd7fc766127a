"""Put the chunks of a seed-layout collection back in order and rebuild the text they came from.

A collection made the seed's way (LangChain `WeaviateVectorStore.from_documents` with random
uuid4 ids and a `parent_id` metadata chain) stores no offsets, no chunk index and not the
overlap. What it does store: each chunk's text, the file it came from (`source`) and the id of
the chunk before it (`parent_id`). The seed chains *all* chunks of one `from_documents` call in
one list, so the first chunk of a file points at the last chunk of the previous file: a change
of `source` along the chain is a document boundary, never a continuation.

LangChain's RecursiveCharacterTextSplitter (the seed's, default separators "\\n\\n", "\\n", " ",
"") carries the overlap as whole pieces and strips each chunk's edges. So a chunk repeats a
*suffix* of its predecessor (usually up to 50 characters), and where it does not (a piece too
long to carry, e.g. a Chinese line of more than 50 characters after a line break), the
separator between them was whitespace that the stripping removed. `overlap_length` finds the
repeated part by matching text; `reconstruct` lays the chunks out on one text with offsets and
puts a line break back where nothing overlaps.

Everything here is pure: no I/O.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# SeedObject lives with the other records so that the stores can hand one out.
from stitcher.models import SeedObject

#: An overlap at least this long is trusted whatever surrounds it; shorter ones must start and
#: end where the seed's splitter cuts (at whitespace) and hold a word, else a chance match like
#: "data" / "ata", or the "|" that ends and starts every table row, would eat characters at a
#: join that had no overlap at all.
TRUSTED_OVERLAP = 8

#: What is put back between two chunks that share no text. The seed's splitter strips the
#: separator it cut at; with a non-zero overlap setting a join without overlap comes from a
#: line break (a line too long to carry as overlap) or a paragraph break. Which one is not
#: recorded: a paragraph break is put back where the text says so (`PARAGRAPH_JOINER`), a line
#: break everywhere else, which the sentence rules take as soft when the text around it reads as
#: one wrapped sentence (stitcher.sentences).
LINE_JOINER = "\n"
PARAGRAPH_JOINER = "\n\n"

# The line before the join ends a sentence or is structure; or the line after it is structure
# (heading, table row, list item, fence, rule): then the break was most likely a paragraph's.
_ENDS_BLOCK = re.compile(r"(?:[.!?。！？…][\"'”’」』)）\]】》]*|^\s*(?:#{1,6}\s.*|\|.*|`{3,}.*))$")
_STARTS_BLOCK = re.compile(
    r"^(?:#{1,6}\s|\||[-*+•]\s|\d{1,3}[.)、]\s?|`{3}|[-=*_]{3,}$|<[A-Za-z!/])"
)


@dataclass(frozen=True)
class Placed:
    """A chunk's place in the reconstructed text.

    The chunk's own text is ``text[start:start + len(obj.text)]``; `end` also covers the
    `joiner` put back after it (so neighbours always touch or overlap). `overlap` is how many
    characters it shares with the chunk before it.
    """

    obj: SeedObject
    start: int
    end: int
    overlap: int
    joiner: str

    @property
    def text(self) -> str:
        """The chunk's text plus the joiner after it: exactly ``reconstructed[start:end]``."""
        return self.obj.text + self.joiner


@dataclass(frozen=True)
class Reconstruction:
    """A run of chained chunks of one source laid out on one text."""

    text: str
    placed: tuple[Placed, ...]

    @property
    def zero_overlap_joins(self) -> int:
        """Joins where the chunks shared no text (a line break was put back)."""
        return sum(1 for p in self.placed[1:] if p.overlap == 0)


def overlap_length(previous: str, following: str) -> int:
    """How many leading characters of `following` repeat the end of `previous`.

    The longest ``k`` with ``previous.endswith(following[:k])`` and ``k < len(following)`` (a
    chunk always adds something), accepted when it is at least `TRUSTED_OVERLAP` characters or
    sits where the seed's splitter cuts (after whitespace, or the whole of `previous`, in
    `previous`, and before whitespace in `following`) and holds a letter or digit. Returns 0
    when there is none.

    Args:
        previous: The earlier chunk's text.
        following: The next chunk's text.
    """
    longest = min(len(previous), len(following) - 1)
    for k in range(longest, 0, -1):
        if not previous.endswith(following[:k]):
            continue
        if k >= TRUSTED_OVERLAP:
            return k
        starts_at_cut = k == len(previous) or previous[-k - 1].isspace()
        # A lone "|" or "-" repeats at every table row or list item; words do not.
        has_word = any(ch.isalnum() for ch in following[:k])
        if starts_at_cut and following[k].isspace() and has_word:
            return k
    return 0


def zero_overlap_joiner(previous: str, following: str) -> str:
    """What to put back between two chunks that share no text (see `LINE_JOINER`)."""
    if previous[-1:].isspace() or following[:1].isspace():
        return ""  # not stripped: nothing was lost at this join
    last_line = previous.rsplit("\n", 1)[-1]
    first_line = following.split("\n", 1)[0]
    if _ENDS_BLOCK.search(last_line) or _STARTS_BLOCK.match(first_line):
        return PARAGRAPH_JOINER
    return LINE_JOINER


def reconstruct(objects: Sequence[SeedObject], origin: int = 0) -> Reconstruction:
    """Lay consecutive chunks of one source out on one text, each shared character once.

    Args:
        objects: Chunks in chain order (each one's parent is the one before it).
        origin: Offset of the first chunk (0 when it is the document's first chunk).

    Returns:
        The text (starting at offset `origin`, i.e. ``text[0]`` is at `origin`) and each chunk's
        place; ``reconstruction.text[p.start - origin:p.end - origin] == p.text``.
    """
    if not objects:
        return Reconstruction("", ())
    parts = [objects[0].text]
    length = len(objects[0].text)
    starts = [0]
    overlaps = [0]
    joiners: list[str] = []
    for previous, current in itertools.pairwise(objects):
        k = overlap_length(previous.text, current.text)
        if k:
            joiners.append("")
            starts.append(length - k)
            parts.append(current.text[k:])
            length += len(current.text) - k
        else:
            joiner = zero_overlap_joiner(previous.text, current.text)
            joiners.append(joiner)
            parts.append(joiner + current.text)
            starts.append(length + len(joiner))
            length += len(joiner) + len(current.text)
        overlaps.append(k)
    joiners.append("")
    placed = tuple(
        Placed(
            obj=obj,
            start=origin + start,
            end=origin + start + len(obj.text) + len(joiner),
            overlap=overlap,
            joiner=joiner,
        )
        for obj, start, overlap, joiner in zip(objects, starts, overlaps, joiners, strict=True)
    )
    return Reconstruction("".join(parts), placed)


def chains(objects: Iterable[SeedObject]) -> list[list[SeedObject]]:
    """Order objects into runs of one source each, following `parent_id`.

    A run starts at an object whose parent is missing from `objects`, is None, or belongs to
    another source, and follows children of the same source. Should an object have several
    children (the chain was tampered with), the first by id continues the run and the others
    start runs of their own; objects on a cycle with no way in are cut at their smallest id.
    Every object ends up in exactly one run.

    Returns:
        The runs, sorted by (source, first id) so the result does not depend on input order.
    """
    by_id = {obj.id: obj for obj in objects}
    children: dict[str, list[str]] = {}
    for obj in by_id.values():
        parent = by_id.get(obj.parent_id) if obj.parent_id else None
        if parent is not None and parent.source == obj.source and parent.id != obj.id:
            children.setdefault(parent.id, []).append(obj.id)
    for kids in children.values():
        kids.sort()
    continues = {kids[0] for kids in children.values()}
    runs: list[list[SeedObject]] = []
    seen: set[str] = set()

    def walk(start: str) -> None:
        run = []
        current: str | None = start
        while current is not None and current not in seen:
            seen.add(current)
            run.append(by_id[current])
            kids = children.get(current)
            current = kids[0] if kids else None
        if run:
            runs.append(run)

    for object_id in sorted(by_id):
        if object_id not in continues:
            walk(object_id)
    for object_id in sorted(by_id):  # cycles: nothing led into them
        if object_id not in seen:
            walk(object_id)
    runs.sort(key=lambda run: (run[0].source, run[0].id))
    return runs
