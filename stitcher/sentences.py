"""Where sentences start and end, for Chinese and Latin-script text alike.

These rules decide how far a search hit is widened (stitcher.stitch); they live here so every
part of stitcher that needs them agrees. All functions work on a *window*: a string that may be
a piece of a document. Positions are indexes into that string. Whether the window's edges are the
document's edges is passed in (`at_doc_start`, `at_doc_end`), because only then may the text
before the first or after the last character be taken as "nothing".

Sentence END positions `q` (``text[:q]`` ends a sentence) — always right after a non-whitespace
character, except the document's very end:

* after a run of Chinese terminators ``。！？｡`` or an ellipsis ``…``/``⋯`` (runs such as ``？！``
  and ``……`` count once), plus any closing quotes and brackets (`CLOSERS`). No space is needed:
  ``他说：“走吧。”然后`` ends after ``”``.
* after a run of Latin terminators ``. ! ?`` plus closers, when the next character is
  whitespace (so ``3.14``, ``e.g.x`` and ``www.a.com`` are not ends). A ``!`` or ``?`` run also
  ends before a Chinese character (``好!然后``), a plain ``.`` does not. A single ``.`` after a
  known abbreviation (`ABBREVIATIONS`: ``Dr. Smith``, ``e.g. this``) or after a list number at
  the start of a line (``1. 将拆分``, ``a. item``) is not an end.
* at a line break: after loading, the line breaks left in the text are structural (list items,
  headings, table rows, code), so the end is after the last non-whitespace character before a
  ``\\n``. A blank line (paragraph end) is the special case of this.
* the document's end: after its last non-whitespace character, and ``len(text)`` itself.

Full-width ``．`` ends a sentence like ``。`` (Chinese man pages and older texts use it as a
full stop), except between two digits, where it is a decimal point (``３．５``).

``；，：`` are clause punctuation (`CLAUSE_PUNCTUATION`), used only as a fallback cut when no
sentence end is in reach.

Sentence START positions `p`: the document's start (0 and its first non-whitespace character),
and the first non-whitespace character after each sentence end.

The chunker has its own separator list (stitcher.chunking.SEPARATORS) because a text splitter
needs regular expressions it can split on; it encodes the same classes of punctuation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: Chinese / full-width sentence terminators; no following space is needed.
CJK_TERMINATORS = "。！？｡"
#: Ellipses end a sentence like a Chinese terminator (…… is one run).
ELLIPSES = "…⋯"
#: The full-width full stop: a terminator, except between digits (a decimal point).
FULLWIDTH_STOP = "．"
#: Latin terminators: a sentence end only when followed by whitespace (or, for ! ?, a Han char).
LATIN_TERMINATORS = ".!?"
#: Closing quotes and brackets that stay with the sentence they close.
CLOSERS = "”’」』）》〉】〕〗］｝»\"')]}"
#: Clause punctuation: a weaker cut than a sentence end. The Latin ones count only when followed
#: by whitespace (so "1,000" and "a:b" are not cut).
CJK_CLAUSE_PUNCTUATION = "，；：、"
LATIN_CLAUSE_PUNCTUATION = ",;:"
CLAUSE_PUNCTUATION = CJK_CLAUSE_PUNCTUATION + LATIN_CLAUSE_PUNCTUATION
#: Every character that can be part of a terminator run (used to find where a run begins).
TERMINATOR_RUN_CHARS = CJK_TERMINATORS + FULLWIDTH_STOP + ELLIPSES + LATIN_TERMINATORS + CLOSERS

#: Words that a single "." follows without ending the sentence (compared lower-case). Kept short
#: on purpose: "etc." and "No." end sentences as often as not, so they are not listed.
ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "e.g", "i.e", "cf", "fig", "approx"}
)

_TERMINATORS = CJK_TERMINATORS + FULLWIDTH_STOP + ELLIPSES + LATIN_TERMINATORS
_CANDIDATE_RE = re.compile("[" + re.escape(_TERMINATORS) + "\n]")
_CJK_RUN_TAIL_RE = re.compile("[" + re.escape(_TERMINATORS) + "]*[" + re.escape(CLOSERS) + "]*")
_LATIN_RUN_TAIL_RE = re.compile(
    "[" + re.escape(LATIN_TERMINATORS) + "]*[" + re.escape(CLOSERS) + "]*"
)
_HAN_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ENUMERATOR_RE = re.compile(r"[^\S\n]{0,4}(?:\d{1,3}(?:\.\d{1,3}){0,2}|[A-Za-z])")
_ENUMERATOR_TAIL_RE = re.compile(r"[^\S\n]*[\d.]*|[^\S\n]*[A-Za-z]?")
_NON_SPACE_RE = re.compile(r"\S")
_CLAUSE_RE = re.compile(
    "[" + re.escape(CJK_CLAUSE_PUNCTUATION) + "]"
    "|[" + re.escape(LATIN_CLAUSE_PUNCTUATION) + r"](?=\s)"
)
_SPACE_RE = re.compile(r"\s")
_LAST_SPACE_RE = re.compile(r"(?s:.*)\s")
_CLOSERS_RE = re.compile("[" + re.escape(CLOSERS) + "]*")

_ABBREVIATION_LOOKBACK = max(len(a) for a in ABBREVIATIONS) + 1
_ENUMERATOR_LOOKBACK = 16  # longer than any _ENUMERATOR_RE match


def _run_start(text: str, i: int) -> int:
    """Where the terminator/closer run that ends at `i` begins (`i` if there is none)."""
    while i > 0 and text[i - 1] in TERMINATOR_RUN_CHARS:
        i -= 1
    return i


def _space_start(text: str, i: int) -> int:
    """Where the whitespace run that ends at `i` begins."""
    while i > 0 and text[i - 1].isspace():
        i -= 1
    return i


def next_non_space(text: str, i: int, limit: int | None = None) -> int:
    """First position >= `i` (and < `limit`) holding a non-whitespace character, else `limit`.

    `limit` defaults to ``len(text)``.
    """
    end = len(text) if limit is None else limit
    m = _NON_SPACE_RE.search(text, i, end)
    return m.start() if m else end


def _dot_is_not_an_end(text: str, dot: int, at_doc_start: bool) -> bool:
    """Whether a lone "." at `dot` follows an abbreviation or a list number ("1.", "a.").

    When the window does not show enough text before the dot to tell, the answer is "not an
    end": a missed end only makes a passage longer, a false one would cut a sentence.
    """
    k = dot
    floor = max(0, dot - _ABBREVIATION_LOOKBACK)
    while k > floor and text[k - 1].isascii() and (text[k - 1].isalpha() or text[k - 1] == "."):
        k -= 1
    if k == 0 and not at_doc_start:
        return True
    if (
        k < dot
        and (k == 0 or not (text[k - 1].isascii() and text[k - 1].isalnum()))
        and text[k:dot].lower() in ABBREVIATIONS
    ):
        return True
    seg_lo = max(0, dot - _ENUMERATOR_LOOKBACK)
    newline = text.rfind("\n", seg_lo, dot)
    if newline >= 0:
        line_start = newline + 1
    elif seg_lo == 0:
        if not at_doc_start:
            # The line's start is not visible: it could be a list number only if what is
            # visible could be the end of one.
            return _ENUMERATOR_TAIL_RE.fullmatch(text, 0, dot) is not None
        line_start = 0
    else:
        return False  # the line started long before: no list number
    return _ENUMERATOR_RE.fullmatch(text, line_start, dot) is not None


def _is_decimal_point(text: str, at: int, at_doc_end: bool) -> bool:
    """Whether the "．" at `at` sits between digits; unseen neighbours count as digits (a
    missed end only makes a passage longer, a false one would cut a sentence)."""
    before = text[at - 1].isdigit() if at > 0 else True
    after = text[at + 1].isdigit() if at + 1 < len(text) else not at_doc_end
    return before and after


def _iter_rule_ends(
    text: str, origin: int, stop: int, at_doc_start: bool, at_doc_end: bool
) -> Iterator[int]:
    """Sentence ends produced by a punctuation or line-break rule, in increasing order.

    Scans from `origin` (which must not be inside a terminator run) and stops once a run would
    begin after `stop`. The document-end rule is not applied here. An end may be yielded twice.
    """
    i = origin
    n = len(text)
    # A line-break end at `stop` is only seen at its "\n", past any trailing spaces.
    reach = stop
    while reach < n and text[reach] != "\n" and text[reach].isspace():
        reach += 1
    stop_at = min(reach + 1, n)
    while i < stop_at:
        m = _CANDIDATE_RE.search(text, i, stop_at)
        if m is None:
            return
        at = m.start()
        ch = text[at]
        if ch == "\n":
            i = at + 1
            q = at
            while q > 0 and text[q - 1] != "\n" and text[q - 1].isspace():
                q -= 1
            if q > 0 and not text[q - 1].isspace():
                yield q
        elif ch in LATIN_TERMINATORS:
            tail = _LATIN_RUN_TAIL_RE.match(text, at + 1)
            q = tail.end() if tail else at + 1
            i = q
            if q >= n:
                continue  # the next character is not visible (document end is handled apart)
            following = text[q]
            if following.isspace():
                if q == at + 1 and ch == "." and _dot_is_not_an_end(text, at, at_doc_start):
                    continue
                yield q
            elif _HAN_RE.match(following) and ("!" in text[at:q] or "?" in text[at:q]):
                yield q
        else:
            if ch == FULLWIDTH_STOP and _is_decimal_point(text, at, at_doc_end):
                i = at + 1
                continue
            tail = _CJK_RUN_TAIL_RE.match(text, at + 1)
            q = tail.end() if tail else at + 1
            i = q
            if q < n or at_doc_end:  # else a closer may follow beyond the window
                yield q


def _doc_end_positions(text: str, at_doc_start: bool) -> tuple[int, int]:
    """The document-end rule's two ends: after the last non-whitespace character, and the end.

    In a window of trailing whitespace the last non-whitespace character is not visible, so only
    the document's end itself is known.
    """
    content_end = _space_start(text, len(text))
    if content_end == 0 and not at_doc_start:
        content_end = len(text)
    return content_end, len(text)


def sentence_ends(
    text: str,
    lo: int = 0,
    hi: int | None = None,
    *,
    at_doc_start: bool = False,
    at_doc_end: bool = False,
) -> list[int]:
    """All sentence end positions `q` with ``lo <= q <= hi``, ascending, without duplicates.

    Args:
        text: The window to look at.
        lo: Smallest position of interest.
        hi: Largest position of interest; defaults to ``len(text)``.
        at_doc_start: Whether ``text[0]`` is the document's first character.
        at_doc_end: Whether ``text`` ends where the document ends.
    """
    top = len(text) if hi is None else min(hi, len(text))
    out: list[int] = []
    for q in _iter_rule_ends(text, _run_start(text, lo), top, at_doc_start, at_doc_end):
        if lo <= q <= top and (not out or out[-1] != q):
            out.append(q)
    if at_doc_end:
        for q in _doc_end_positions(text, at_doc_start):
            if lo <= q <= top and (not out or out[-1] < q):
                out.append(q)
    return out


def sentence_end_at_or_after(
    text: str,
    pos: int,
    hi: int | None = None,
    *,
    at_doc_start: bool = False,
    at_doc_end: bool = False,
) -> int | None:
    """The nearest sentence end `q` with ``pos <= q <= hi``, or None if there is none.

    Ends sit right after a non-whitespace character, so when `pos` is in the whitespace after a
    sentence, the answer is the end of the *next* sentence: pass the position after the last
    non-whitespace character if that is not wanted.

    Args:
        text: The window to look at.
        pos: Where to start looking.
        hi: Largest acceptable position; defaults to ``len(text)``.
        at_doc_start: Whether ``text[0]`` is the document's first character.
        at_doc_end: Whether ``text`` ends where the document ends.
    """
    top = len(text) if hi is None else min(hi, len(text))
    if pos > top:
        return None
    # A terminator run that began before `pos` may end at or after it ("。|”").
    for q in _iter_rule_ends(text, _run_start(text, pos), top, at_doc_start, at_doc_end):
        if q > top:
            break
        if q >= pos:
            return q
    if at_doc_end:
        content_end, doc_end = _doc_end_positions(text, at_doc_start)
        q = content_end if content_end >= pos else doc_end
        if q <= top:
            return q
    return None


def sentence_start_at_or_before(
    text: str,
    pos: int,
    lo: int = 0,
    *,
    at_doc_start: bool = False,
) -> int | None:
    """The nearest sentence start `p` with ``lo <= p <= pos``, or None if there is none.

    Args:
        text: The window to look at.
        pos: Where to start looking (backwards).
        lo: Smallest acceptable position.
        at_doc_start: Whether ``text[0]`` is the document's first character.
    """
    if pos < lo or pos > len(text):
        return None
    # An end before `lo` still yields a start >= lo when only whitespace lies between them.
    origin = _run_start(text, _space_start(text, lo))
    best: int | None = None
    for q in _iter_rule_ends(text, origin, pos, at_doc_start, False):
        if q > pos:
            break
        p = next_non_space(text, q)
        if p <= pos and p < len(text):
            best = p
        else:
            break  # starts only grow with q
    if best is None and at_doc_start:
        first = next_non_space(text, 0)
        best = first if first <= pos and first < len(text) else 0
    if best is not None and best >= lo:
        return best
    return None


def is_sentence_end(
    text: str, q: int, *, at_doc_start: bool = False, at_doc_end: bool = False
) -> bool:
    """Whether ``text[:q]`` ends a sentence (see the module docstring for the rules)."""
    return (
        sentence_end_at_or_after(text, q, q, at_doc_start=at_doc_start, at_doc_end=at_doc_end) == q
    )


def is_sentence_start(text: str, p: int, *, at_doc_start: bool = False) -> bool:
    """Whether a sentence starts at `p` (see the module docstring for the rules)."""
    return sentence_start_at_or_before(text, p, p, at_doc_start=at_doc_start) == p


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Split a whole document into sentences: ``(start, end)`` pairs, whitespace excluded.

    Every non-whitespace character of `text` lies in exactly one pair.
    """
    out: list[tuple[int, int]] = []
    start = next_non_space(text, 0)
    for q in sentence_ends(text, at_doc_start=True, at_doc_end=True):
        if q > start:
            out.append((start, q))
            start = next_non_space(text, q)
    return out


def weak_start_at_or_after(text: str, lo: int, pos: int) -> int | None:
    """A fallback start in ``[lo, pos]`` when no sentence start is in reach.

    Prefers the earliest position after clause punctuation, then the earliest word start (the
    first non-whitespace character after whitespace), so that a cut never splits a word. Returns
    None when neither exists (the caller cuts at `lo`).
    """
    scan_from = max(lo - 1, 0)
    clause = _CLAUSE_RE.search(text, scan_from, pos)
    if clause is not None:
        after = _CLOSERS_RE.match(text, clause.end())
        p = next_non_space(text, after.end() if after else clause.end())
        if lo <= p <= pos:
            return p
    space = _SPACE_RE.search(text, scan_from, pos)
    if space is not None:
        p = next_non_space(text, space.start())
        if lo <= p <= pos:
            return p
    return None


def weak_end_at_or_before(text: str, pos: int, hi: int) -> int | None:
    """A fallback end in ``[pos, hi]`` when no sentence end is in reach.

    Prefers the latest position after clause punctuation (with its closers), then the latest
    whitespace (the end of a word). Returns None when neither exists (the caller cuts at `hi`).
    The result may be followed or preceded by whitespace: the caller trims it.
    """
    best: int | None = None
    # Latin clause marks need to see the following whitespace, so look one character further.
    for clause in _CLAUSE_RE.finditer(text, max(pos - 1, 0), min(hi + 1, len(text))):
        if clause.end() > hi:
            break
        after = _CLOSERS_RE.match(text, clause.end(), hi)
        q = after.end() if after else clause.end()
        if q >= pos:
            best = q
    if best is not None:
        return best
    space = _LAST_SPACE_RE.match(text, pos, min(hi + 1, len(text)))
    if space is not None:
        q = space.end() - 1
        if pos <= q <= hi:
            return q
    return None
