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
  ``他说：“走吧。”然后`` ends after ``”``. A run of ellipses alone right before a Latin letter
  or digit is an "and so on" inside the sentence (``Red Hat/Slackware/……Linux 系统``), not an
  end.
* after a run of Latin terminators ``. ! ?`` plus closers, when the next character is
  whitespace (so ``3.14``, ``e.g.x`` and ``www.a.com`` are not ends), unless the run holds a
  closer and a lower-case Latin word follows on the same line: a quoted or bracketed title
  inside a sentence (``see “What is a preinst?” for more``, ``(… script?”) script``). A
  ``!`` or ``?`` run also ends before a Chinese character (``好!然后``), a plain ``.`` does
  not. A single ``.`` after a known abbreviation (`ABBREVIATIONS`: ``Dr. Smith``, ``e.g.
  this``) or after a list number at the start of a line (``1. 将拆分``, ``a. item``) is not
  an end, nor is ``etc.`` before a lower-case word on the same line (``values in memory,
  etc. is used``).
* at a line break, after the last non-whitespace character before the ``\\n``, unless the break
  is *soft* (below). A blank line (a paragraph end) is always an end.
* the document's end: after its last non-whitespace character, and ``len(text)`` itself.

Full-width ``．`` ends a sentence like ``。`` (Chinese man pages and older texts use it as a
full stop), except between two digits, where it is a decimal point (``３．５``).

``；，：`` are clause punctuation (`CLAUSE_PUNCTUATION`), used only as a fallback cut when no
sentence end is in reach.

A single line break is SOFT (no end) when the line before does not end a sentence and the next
line continues it — hard-wrapped prose that the loader left alone (weak evidence), and text
stored with its line breaks (seed-layout and adopted collections). The break is soft unless one
of these holds, checked in this order (`_break_is_hard`):

* the next line is blank (a paragraph end), or nothing but whitespace follows up to the end;
* the line before is a heading or structure: shorter than `SHORT_LINE` columns (CJK characters
  count 2: headings, labels, man page section names, the last line of a paragraph), a ``#``
  heading, a table row (``|``, a column gap of 4+ spaces or two of 3, tabs counted to their
  8-column stops), a line ending with
  ``:`` or ``：`` (it introduces a list or a listing) or ending like code (``{ } \\``, or ``;``
  after a call ``f(x)`` or an assignment ``x = 1``);
* the next line is structure: a list item (``- * + •``, ``1.`` ``1)`` ``a.`` ``一、`` ``（一）``),
  an option (``-a``, ``--all``), a heading ``#``, a quote ``>``, an HTML tag, a fence, a rule,
  a ``$ `` prompt, ``{ } =``, a table row;
* indentation: the next line is indented deeper than the line before by 2+ columns (code, a
  quotation, an option's description; one column is a stray leading space), unless the line
  before is a list item (``- item`` / ``  continued``, ``(a) item`` / ``      continued``: a
  hanging indent) or the next line starts exactly where the text after the line's first word
  begins (a tag paragraph: ``kernel 该目录包括如下文件: ...`` over lines indented to ``该``,
  as ``man`` sets a tag that fits before its text); or it is dedented by more than
  `FIRST_LINE_INDENT` columns (a first-line indent of up to that many is prose);
* the next line starts, after opening quotes and brackets, with a Chinese character while the
  line before holds none (a translation under an English line), or is in capitals (a heading)
  while the line before is not and does not end with ``, ; -``.

Everything else continues the sentence: a lower-case letter, a digit, punctuation in mid-sentence
(``, ; ) —`` and their full-width forms), a capital in a line of prose, Chinese after Chinese
without a terminator, a word split by a hyphen at the line end. A line that ends with a
terminator ends its sentence by the punctuation rules above whatever the break is (an
abbreviation or a list number before the break is left to the break rule).

The rule looks at most `LINE_LOOKBACK` characters back from the break (a longer line before it
counts as long prose whose indentation is not known: the next line must then not be indented)
and at most `NEXT_LINE_LOOKAHEAD` characters of the next line, after its indentation, so a window
that shows that much decides a break exactly as the whole document does. When a window does not
show it (the line's start lies before the window and not `LINE_LOOKBACK` characters of it are
visible, or the next line runs past the window's end), the break is taken as soft: like the other
rules, a window may miss an end, never invent one (a missed end only makes a passage longer or
truncated at the bound, a false one cuts a sentence).

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
_CLOSED_RE = re.compile("[" + re.escape(CLOSERS) + "]")
# A closer in a terminator run: after a quoted or bracketed "...?", a sentence may read on in
# lower case ("see “What is a Debian preinst?” for an overview", "‘M-.’ render"): _reads_on.

_ABBREVIATION_LOOKBACK = max(len(a) for a in ABBREVIATIONS) + 1
_ENUMERATOR_LOOKBACK = 16  # longer than any _ENUMERATOR_RE match

#: Version of these rules. Ingest stores sentence flags computed with them, so a collection
#: written under another version must be rebuilt. 1: every line break ends a sentence;
#: 2: soft line breaks; 3: a terminator before a closing quote or bracket and a lower-case word
#: on the same line ("“What is it?” for") is not an end; 4: an ellipsis right before a Latin
#: letter or digit ("Slackware/……Linux") and "etc." before a lower-case word are not ends, and a
#: next line indented one column deeper (a stray leading space in a man page) is not indented;
#: 5: a line's indentation is known up to 200 characters back (was 90), and a next line indented
#: to the text after the line's first word continues a tag paragraph.
#: 6: a tab inside a line is the spaces to its tab stop, not a column gap by itself.
SENTENCE_RULES_VERSION = 6

#: A line before a break narrower than this (in columns, CJK characters count 2) is a heading,
#: a label or the last line of a paragraph, not a wrapped line: the break ends a sentence.
#: Hard-wrapped prose fills its lines to the wrap column (72-80 in manuals and licences) less
#: one word.
SHORT_LINE = 36
#: Characters looked at before a line break to find its line's start and indentation: a line
#: of an 80-column manual fits, and so do two or three of them that the loader joined (90 was
#: too short: a joined man page line of 91 characters hid its indent, and the same-indent line
#: that continued its sentence counted as indented: iptables(8) in Chinese). A longer line is
#: long prose whose indentation is not known. Stitching sees 64 characters beyond its bound
#: (stitch.BOUND_MARGIN, ids.CONTEXT_CHARS) and fetched chunks reach further, so breaks near
#: the bound are decided too.
LINE_LOOKBACK = 200
#: Characters of the next line looked at, after its indentation (list markers, table cells,
#: capitals).
NEXT_LINE_LOOKAHEAD = 32
#: A first line indented by at most this many columns more than the next one is a paragraph's
#: first-line indent (GNU texts use 2-3 spaces, Chinese two ideographic spaces, old texts a tab).
FIRST_LINE_INDENT = 8

_TAB_WIDTH = 8
_LINE_INDENT_RE = re.compile(r"[^\S\n]*")
_WIDE_RUN_RE = re.compile(
    "[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]+"
)
_COLUMN_GAP_RE = re.compile(r"\S {4,}\S|\S {3}\S.*\S {3}\S")
_LIST_MARKER_RE = re.compile(
    r"(?:[-*+\u2022\u00b7\u2023\u25aa\u25e6]|\d{1,3}(?:\.\d{1,3})*[.)]|[A-Za-z][.)]"
    r"|\([A-Za-z\d]{1,3}\))[ \t]+"
)
#: A short tag before the text of its line ("kernel ", "F9   "): no sentence or clause mark in it.
_TAG_RE = re.compile(r"[^\s.!?:;,。！？：；，]{1,24}[ \t]+(?=\S)")
_CODE_END_RE = re.compile(r"[{}\\]\Z|(?:\w\(.*\)|\S\s*=\s*\w).*;\Z")  # f(x); x = 1;
_HEADING_RE = re.compile(r"#{1,6}(?:\s|\Z)")
#: What starts a line that is structure, not the continuation of a sentence.
_STRUCTURE_START_RE = re.compile(
    r"""(?:
        [-*+\u2022\u00b7\u2023\u25aa\u25e6][ \t]           # bullet
      | --?[A-Za-z]                                     # command-line option
      | \d{1,3}(?:\.\d{1,3})*[.)](?:\s|\Z)                # 1. 1) 1.2.
      | [A-Za-z][.)][ \t]                               # a. b)
      | [一二三四五六七八九十百]+、                       # 一、
      | [(（][一二三四五六七八九十\d]{1,3}[)）]           # （一） (1)
      | [#>|{}=]                                        # heading, quote, table, code
      | <(?!https?:|ftp:|mailto:)[A-Za-z!/]             # HTML, not a <URL>
      | ```|~~~                                         # fence
      | [-_*]{3,}                                       # rule
      | \$[ \t]                                         # shell prompt
    )""",
    re.VERBOSE,
)
_OPENERS = "\"'“‘「『（《【〔([{«"
_CAPS_RUN_RE = re.compile(r"[A-Z]{2}")


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


def _display_width(text: str) -> int:
    """Columns `text` takes in a monospace font: East Asian wide characters count 2."""
    return 2 * len(text) - len(_WIDE_RUN_RE.sub("", text))


def _indent_width(indent: str) -> int:
    width = 0
    for ch in indent:
        if ch == "\t":
            width += _TAB_WIDTH - width % _TAB_WIDTH
        else:
            width += 2 if ch == "\u3000" else 1
    return width


def _has_column_gap(line: str, column: int = 0) -> bool:
    """Whether the line, starting at `column`, has a gap that separates columns.

    Tabs count as the spaces up to the next tab stop: `man X | col -b` writes the widened gaps
    of justified text as tabs, which must read as they would in a space-rendered page.
    """
    if "\t" in line:
        line = (" " * column + line).expandtabs(_TAB_WIDTH)[column:]
    return "   " in line and _COLUMN_GAP_RE.search(line) is not None


def _break_is_hard(text: str, q: int, nl: int, at_doc_start: bool, at_doc_end: bool) -> bool:
    """Whether the line break at `nl` (its line's content ends at `q`) ends a sentence.

    See the module docstring for the rule. False when the window does not show enough to
    decide: a missed end only makes a passage longer.
    """
    n = len(text)
    head_start = _LINE_INDENT_RE.match(text, nl + 1).end()  # type: ignore[union-attr]
    if head_start >= n:
        return at_doc_end  # only whitespace up to the end: the document's end, if it is one
    if text[head_start] == "\n":
        return True  # a blank line: the paragraph ends

    # The line before: its start (and so its indentation) when it is at most LINE_LOOKBACK long.
    floor = q - LINE_LOOKBACK - 1
    before = text.rfind("\n", max(0, floor), q)
    line_start: int | None
    if before >= 0:
        line_start = before + 1
    elif floor >= 0:
        line_start = None  # a long line
    elif at_doc_start:
        line_start = 0
    else:
        return False  # the line's start is not visible
    in_list = False
    tag_column: int | None = None
    indent_before = 0
    if line_start is not None:
        content_start = _LINE_INDENT_RE.match(text, line_start).end()  # type: ignore[union-attr]
        indent_before = _indent_width(text[line_start:content_start])
        content = text[content_start:q]
        short = len(content) < SHORT_LINE and _display_width(content) < SHORT_LINE
        if short or _HEADING_RE.match(content):
            return True
        in_list = _LIST_MARKER_RE.match(content) is not None
        tag = _TAG_RE.match(content)
        # A tag paragraph ("kernel 该目录包括如下文件: ..." over lines indented to "该"): the
        # hanging indent is the column where the text after the tag begins.
        tag_column = indent_before + _display_width(tag.group()) if tag else None
    else:
        content = text[q - LINE_LOOKBACK : q]
    if "|" in content or content[-1] in ":：" or _has_column_gap(content, indent_before):
        return True
    if content[-1] in "{}\\;" and _CODE_END_RE.search(content):
        return True

    # The next line, up to NEXT_LINE_LOOKAHEAD characters after its indentation.
    limit = head_start + NEXT_LINE_LOOKAHEAD
    line_end = text.find("\n", head_start, limit)
    if line_end < 0:
        if limit > n and not at_doc_end:
            return False  # the next line runs past the window
        line_end = min(limit, n)
    head = text[head_start:line_end]
    indent_after = _indent_width(text[nl + 1 : head_start])
    if _STRUCTURE_START_RE.match(head) or "|" in head or _has_column_gap(head, indent_after):
        return True
    if line_start is None:
        if indent_after > 0:
            return True
    elif indent_after > indent_before + 1:
        if not in_list and indent_after != tag_column:
            return True
    elif indent_before - indent_after > FIRST_LINE_INDENT:
        return True
    k = 0
    while k < len(head) and head[k] in _OPENERS:
        k += 1
    if k == len(head):
        return True
    first = head[k]
    if _HAN_RE.match(first):
        return _HAN_RE.search(content) is None
    if first.isupper():
        if content[-1] in ",;-，；、":
            return False  # mid-sentence: "... on an "AS IS" BASIS," / "WITHOUT WARRANTIES ..."
        heading = _CAPS_RUN_RE.search(head) is not None and not any(c.islower() for c in head)
        return heading and any(c.islower() for c in content)
    return False


def _is_decimal_point(text: str, at: int, at_doc_start: bool, at_doc_end: bool) -> bool:
    """Whether the "．" at `at` sits between digits; unseen neighbours count as digits (a
    missed end only makes a passage longer, a false one would cut a sentence)."""
    before = text[at - 1].isdigit() if at > 0 else not at_doc_start
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
    last = -1  # the last end yielded: a line that a terminator ends needs no break rule
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
            if (
                q > 0
                and q != last
                and not text[q - 1].isspace()
                and _break_is_hard(text, q, at, at_doc_start, at_doc_end)
            ):
                last = q
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
                if (
                    q == at + 1
                    and ch == "."
                    and _is_etc(text, at)
                    and _reads_on(text, q, at_doc_end)
                ):
                    continue  # "such as A, B, etc. is used": the list ends, the sentence not
                if _CLOSED_RE.search(text, at, q) and _reads_on(text, q, at_doc_end):
                    continue
                last = q
                yield q
            elif _HAN_RE.match(following) and ("!" in text[at:q] or "?" in text[at:q]):
                last = q
                yield q
        else:
            if ch == FULLWIDTH_STOP and _is_decimal_point(text, at, at_doc_start, at_doc_end):
                i = at + 1
                continue
            tail = _CJK_RUN_TAIL_RE.match(text, at + 1)
            q = tail.end() if tail else at + 1
            i = q
            if q < n and text[q].isascii() and text[q].isalnum() and _only_ellipses(text, at, q):
                continue  # "Red Hat/Slackware/……Linux": an "and so on" inside the sentence
            if q < n or at_doc_end:  # else a closer may follow beyond the window
                last = q
                yield q


def _only_ellipses(text: str, at: int, q: int) -> bool:
    """Whether the run ``text[at:q]`` is ellipses only (no full stop, no closer)."""
    return all(ch in ELLIPSES for ch in text[at:q])


def _is_etc(text: str, dot: int) -> bool:
    """Whether the "." at `dot` follows the word "etc"."""
    return (
        dot >= 3
        and text[dot - 3 : dot].lower() == "etc"
        and (dot == 3 or not (text[dot - 4].isascii() and text[dot - 4].isalnum()))
    )


def _reads_on(text: str, q: int, at_doc_end: bool) -> bool:
    """Whether a lower-case Latin word follows `q` on the same line.

    When only spaces are visible up to the window's end, the word may follow beyond it: the
    answer is yes, so a window misses this end rather than invents one.
    """
    j = q
    while j < len(text) and text[j] in " \t":
        j += 1
    if j == len(text):
        return not at_doc_end
    return "a" <= text[j] <= "z"


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
    at_doc_end: bool = False,
) -> int | None:
    """The nearest sentence start `p` with ``lo <= p <= pos``, or None if there is none.

    Args:
        text: The window to look at.
        pos: Where to start looking (backwards).
        lo: Smallest acceptable position.
        at_doc_start: Whether ``text[0]`` is the document's first character.
        at_doc_end: Whether ``text`` ends where the document ends (a line break is decided by
            the line after it, which may be the document's last).
    """
    if pos < lo or pos > len(text):
        return None
    # An end before `lo` still yields a start >= lo when only whitespace lies between them.
    origin = _run_start(text, _space_start(text, lo))
    best: int | None = None
    for q in _iter_rule_ends(text, origin, pos, at_doc_start, at_doc_end):
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


def is_sentence_start(
    text: str, p: int, *, at_doc_start: bool = False, at_doc_end: bool = False
) -> bool:
    """Whether a sentence starts at `p` (see the module docstring for the rules)."""
    return (
        sentence_start_at_or_before(text, p, p, at_doc_start=at_doc_start, at_doc_end=at_doc_end)
        == p
    )


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
