"""Split a document into overlapping chunks that know their exact place in the text.

Search stitches hits back together by character offsets, so the chunks must tile the document:
`chunk.text == text[chunk.start:chunk.end]`, each chunk starts at or before the previous one's
end (no character is lost), the first starts at 0 and the last ends at `len(text)`. Whitespace
is never stripped, not even at the edges, so a whitespace-only text still yields chunks.

LangChain's RecursiveCharacterTextSplitter chooses the cut points: it prefers paragraph breaks,
then line breaks, then sentence ends (Chinese 。！？ need no following space; closing quotes and
brackets stay with their sentence), then clause punctuation, then spaces, then any character.
It returns bare strings, so the offsets are recovered here by aligning each chunk right after
its predecessor (see `_locate`), never by a global `text.find`.

A piece holding no letter or digit — the whitespace between two paragraphs, a lone `*`, `#`,
`|`, `-` or `>` left over from markup — carries nothing to embed or to show as a hit, so it is
not a chunk of its own: it joins a neighbouring chunk (see `_absorb_residue`); so does a list
item's number ("1. ") that the splitter cut off from its item as if it ended a sentence. A
chunk can then be longer than the chunk size by such residue at its edges.

Large texts are cut into windows of at most `_WINDOW_CHARS` characters at the best separator
near the window's end, and each window is split on its own: a text without any separator would
otherwise become one Python string per character inside the splitter.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from stitcher.errors import UsageError, setting
from stitcher.models import Chunk

if TYPE_CHECKING:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

#: Smallest chunk size accepted: below this a chunk no longer holds a sentence.
MIN_CHUNK_SIZE = 20

# Closing quotes and brackets that belong to the sentence they end: 他说：“好。”|下一句
_CLOSERS = "”’」』）》】〕〉\"')\\]"

#: Separators from most to least preferred, as regular expressions. Each match stays at the end
#: of the piece before it (keep_separator="end"), so whitespace after a Latin sentence or clause
#: end belongs to the piece it follows, and the next piece starts with a word. Chinese and Latin
#: sentence ends share one level so that mixed-language paragraphs prefer either. No capturing
#: groups: the splitter wraps each pattern in one and relies on that being the only one.
SEPARATORS: tuple[str, ...] = (
    r"\n\s*\n",  # paragraph break, blank lines included
    r"\n",
    rf"[。！？]+[{_CLOSERS}]*|[.!?]+[{_CLOSERS}]*\s+",  # sentence end
    r"[；，、：]+|[;,:]+\s+",  # clause end; Latin ones need a space (1,000 and a:b stay whole)
    r"\s+",
    "",  # any character
)

_SEPARATOR_RES = tuple(re.compile(pattern) for pattern in SEPARATORS[:-1])
# Every separator match contains one of these characters. One scan for them is several times
# faster than trying the separators, which matters for long texts that have none.
_SEPARATOR_CHARS_RE = re.compile(r"[\s。！？.!?；，、：;,:]")

#: Upper bound on the text handed to the splitter at once.
_WINDOW_CHARS = 65_536


def validate_chunk_settings(chunk_size: int, chunk_overlap: int) -> None:
    """Check chunk size and overlap before any work is done.

    Args:
        chunk_size: Maximum characters per chunk; at least `MIN_CHUNK_SIZE`.
        chunk_overlap: Characters shared by neighbouring chunks at most; 0 <= overlap < size.

    Raises:
        UsageError: The values cannot produce sensible chunks; the message says which to change.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        raise UsageError(f"chunk size must be a whole number, got {chunk_size!r}")
    if isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int):
        raise UsageError(f"chunk overlap must be a whole number, got {chunk_overlap!r}")
    if chunk_size < MIN_CHUNK_SIZE:
        raise UsageError(
            f"chunk size {chunk_size} is too small: use {setting('chunk_size', MIN_CHUNK_SIZE)} "
            "or more"
        )
    if chunk_overlap < 0:
        raise UsageError(
            f"chunk overlap {chunk_overlap} is negative: use {setting('chunk_overlap', 0)} or more"
        )
    if chunk_overlap >= chunk_size:
        raise UsageError(
            f"chunk overlap {chunk_overlap} must be smaller than the chunk size {chunk_size}: "
            f"lower {setting('chunk_overlap')} or raise {setting('chunk_size')}"
        )


def split(text: str, chunk_size: int = 250, chunk_overlap: int = 50) -> list[Chunk]:
    """Cut `text` into chunks of about `chunk_size` characters that tile it without gaps.

    Guarantees: `chunk.text == text[chunk.start:chunk.end]`; chunks are in document order with
    `index` 0..n-1; the first starts at 0, the last ends at `len(text)`; each chunk starts
    after the previous one starts and no later than it ends, the shared part being at most
    `chunk_overlap` characters (0 where the splitter starts afresh, e.g. after a piece too long
    for one chunk). Unless the text has no letter or digit at all,
    every chunk holds one, and without the residue at its edges (whitespace, punctuation,
    symbols) it is at most `chunk_size` characters long. The result depends only on the
    arguments.

    Args:
        text: The whole document text.
        chunk_size: Maximum characters per chunk, residue at its edges aside.
        chunk_overlap: Maximum characters shared by neighbouring chunks.

    Returns:
        The chunks; empty for an empty text.

    Raises:
        UsageError: `chunk_size` or `chunk_overlap` is out of range.
    """
    return [
        Chunk(index, start, end, text[start:end])
        for index, (start, end) in enumerate(split_spans(text, chunk_size, chunk_overlap))
    ]


def split_spans(
    text: str, chunk_size: int = 250, chunk_overlap: int = 50
) -> Iterator[tuple[int, int]]:
    """The [start, end) offsets of `split`'s chunks, one window at a time.

    For very large documents: offsets cost a few bytes each where a Chunk with its text costs
    hundreds, and only one window of the splitter's strings is alive at a time.
    """
    validate_chunk_settings(chunk_size, chunk_overlap)
    return _absorb_residue(text, _splitter_spans(text, chunk_size, chunk_overlap))


def _splitter_spans(text: str, chunk_size: int, chunk_overlap: int) -> Iterator[tuple[int, int]]:
    """The splitter's own chunks, residue-only ones included, one window at a time."""
    splitter = _splitter(chunk_size, chunk_overlap)
    window_chars = max(_WINDOW_CHARS, 8 * chunk_size)
    for window_start, window_end in _windows(text, window_chars):
        window = text[window_start:window_end]
        if _has_separator(window):
            pieces = splitter.split_text(window)
            starts = _locate(window, pieces, chunk_overlap)
            spans = [(s, s + len(piece)) for s, piece in zip(starts, pieces, strict=True)]
            del pieces
        else:
            spans = _character_spans(len(window), chunk_size, chunk_overlap)
        for start, end in spans:
            yield window_start + start, window_start + end


# A letter or digit in any script: what makes a piece worth a chunk of its own.
_CONTENT_RE = re.compile(r"[^\W_]")
# ...unless it is only a list item's number or letter ("1. ", "(a) ", "iv) "): the splitter
# cuts after one as after a sentence's end, and it says nothing without its item's text.
_ENUMERATOR_ONLY = re.compile(r"\s*\(?(?:\d{1,3}|[A-Za-z]|[ivxlcIVXLC]{2,6})[.)]\s*")


def _is_residue(text: str, start: int, end: int) -> bool:
    if not _CONTENT_RE.search(text, start, end):
        return True
    # A number glued to the letters before it ("...Ga.") is the end of a word, not an item's.
    return _ENUMERATOR_ONLY.fullmatch(text, start, end) is not None and (
        start == 0 or not _CONTENT_RE.match(text, start - 1) or text[start].isspace()
    )


def _has_no_content(text: str, start: int, end: int) -> bool:
    return not _CONTENT_RE.search(text, start, end)


def _absorb_residue(
    text: str,
    spans: Iterator[tuple[int, int]],
    is_residue: Callable[[str, int, int], bool] = _is_residue,
) -> Iterator[tuple[int, int]]:
    """`spans` with every piece lacking a letter or digit (or holding only a list item's
    number, "1. ") merged into a neighbouring chunk.

    Dropping such a piece can open a gap between the chunks around it; the gap holds residue
    only (every chunk between them was residue) and is shared out by `_residue_cut`. Leading
    residue joins the first chunk with content, trailing residue the last. A text without any
    content keeps the splitter's chunks: there is nothing for them to join. A text whose only
    letters are list numbers ("a.") keeps them as content: it has nothing else to show.
    """
    held: list[tuple[int, int]] = []  # residue pieces before the first content chunk
    previous: tuple[int, int] | None = None
    for start, end in spans:
        if is_residue(text, start, end):
            if previous is None:
                held.append((start, end))
            continue
        if previous is None:
            start = 0
        else:
            previous_start, previous_end = previous
            if previous_end < start:
                cut = _residue_cut(text, previous_end, start)
                previous_end, start = cut, cut
            yield previous_start, previous_end
        previous = (start, end)
    if previous is None:
        if is_residue is _is_residue and any(_CONTENT_RE.search(text, *span) for span in held):
            yield from _absorb_residue(text, iter(held), _has_no_content)
        else:
            yield from held
    else:
        yield previous[0], len(text)


def _residue_cut(text: str, lo: int, hi: int) -> int:
    """Where the residue `text[lo:hi]` between two chunks is shared out: before it, the end of
    the earlier chunk; from it, the start of the later one.

    Whitespace trails the text before it, as separators do in the splitter. Markup residue goes
    with the line it stands on: a `#`, `*` or `>` opening a line leads into the text after it,
    while residue on the earlier chunk's last line (a closing mark) stays with that line.
    """
    first_mark = lo
    while first_mark < hi and text[first_mark].isspace():
        first_mark += 1
    if first_mark == hi:
        return hi
    line_start = text.rfind("\n", 0, first_mark) + 1
    if line_start >= lo:
        return line_start
    line_end = text.find("\n", first_mark, hi)
    return hi if line_end < 0 else line_end + 1


@functools.lru_cache(maxsize=8)
def _splitter(chunk_size: int, chunk_overlap: int) -> RecursiveCharacterTextSplitter:
    # LangChain: loaded only when ingest splits text
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(
        separators=list(SEPARATORS),
        is_separator_regex=True,
        keep_separator="end",
        strip_whitespace=False,  # stripping would open gaps between chunks
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        length_function=len,
    )


def _has_separator(text: str) -> bool:
    if not _SEPARATOR_CHARS_RE.search(text):
        return False
    return any(separator.search(text) for separator in _SEPARATOR_RES)


def _character_spans(length: int, chunk_size: int, chunk_overlap: int) -> list[tuple[int, int]]:
    """What the splitter yields for text without separators, without one string per character.

    Merging single characters, it fills a chunk, keeps the last `chunk_overlap` characters and
    fills again: a fixed stride of `chunk_size - chunk_overlap`. A test checks the equivalence.
    """
    spans = []
    start = 0
    while True:
        end = min(start + chunk_size, length)
        spans.append((start, end))
        if end == length:
            return spans
        start += chunk_size - chunk_overlap


def _windows(text: str, window_chars: int) -> list[tuple[int, int]]:
    """Consecutive [start, end) ranges covering `text`, each at most `window_chars` long.

    A window ends right after the last occurrence of the most preferred separator found in its
    second half, so windows break where the splitter would like to break anyway.
    """
    ranges = []
    start = 0
    while len(text) - start > window_chars:
        end = _best_cut(text, start + window_chars // 2, start + window_chars)
        ranges.append((start, end))
        start = end
    if start < len(text):
        ranges.append((start, len(text)))
    return ranges


def _best_cut(text: str, lo: int, hi: int) -> int:
    region = text[lo:hi]
    if not _SEPARATOR_CHARS_RE.search(region):
        return hi
    for separator in _SEPARATOR_RES:
        last_end = -1
        for match in separator.finditer(region):
            last_end = match.end()
        if last_end > 0:
            return lo + last_end
    return hi


def _locate(text: str, pieces: list[str], overlap: int) -> list[int]:
    """Start offset of each piece in `text`, given that the pieces tile it in order.

    Each piece must start after its predecessor starts, within `overlap` characters before its
    predecessor's end, and reach beyond that end; the last must end at `len(text)`. Usually one
    position fits; in periodic text (a line of "=====") several do, so this is a depth-first
    search that backs up when a choice leads nowhere, remembering positions known to fail.
    """
    if not pieces:
        return []
    starts = [0] * len(pieces)
    dead: set[tuple[int, int]] = set()
    i = 0
    search_from = 0
    while True:
        start = _candidate(text, pieces, starts, overlap, i, search_from)
        while start >= 0 and (i, start) in dead:
            start = _candidate(text, pieces, starts, overlap, i, start + 1)
        if start < 0:
            if i == 0:
                raise RuntimeError("chunk offsets could not be recovered: this is a bug")
            i -= 1
            dead.add((i, starts[i]))
            search_from = starts[i] + 1
            continue
        starts[i] = start
        if i < len(pieces) - 1:
            i += 1
            search_from = 0
        elif start + len(pieces[i]) == len(text):
            return starts
        else:
            dead.add((i, start))
            search_from = start + 1


def _candidate(
    text: str, pieces: list[str], starts: list[int], overlap: int, i: int, search_from: int
) -> int:
    """Smallest admissible start >= search_from for piece i, or -1."""
    piece = pieces[i]
    if i == 0:
        return 0 if search_from == 0 and text.startswith(piece) else -1
    previous_start = starts[i - 1]
    previous_end = previous_start + len(pieces[i - 1])
    lowest = max(
        search_from,
        previous_start + 1,
        previous_end - overlap,
        previous_end - len(piece) + 1,
    )
    if lowest > previous_end:
        return -1
    # The end bound makes find() accept only matches starting at or before previous_end.
    return text.find(piece, lowest, previous_end + len(piece))
