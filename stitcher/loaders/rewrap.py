"""Join hard-wrapped lines back into paragraphs, leaving everything else exactly as it is.

Text rendered for a terminal (docbook manuals, man pages, GNU info, licences, e-mail, Markdown,
PDF text, Chinese) breaks each paragraph into lines of about the same width. `rewrap` removes
those breaks and no others, deciding each paragraph from evidence; where the evidence is weak it
leaves the lines alone, because a wrong join of code or table lines loses structure while a
missed join only costs a soft break.

Units. The text is cut into blocks at blank lines and at fenced code blocks (``` or ~~~, kept
verbatim). Lines quoted with ">" are grouped by quote depth; inside a group the prefixes are
set aside, the quoted text is treated like any other block, and each output line gets back the
prefix of its first line. A block is then cut into *runs*, candidate paragraphs, at:

- structure lines, never joined to anything: Markdown headings, table rows ("|", box-drawing
  ruling), rules and heading underlines (and the heading line above an underline), HTML
  tag lines, reST directives, GNU info node headers and menu lines;
- item starts: bullets, "1." / "1.2." / "(a)" / "a)" numbers, "一、" / "（一）", man/info option
  tags ("-a, --all" followed by two spaces or the line end);
- a change of indentation. A run keeps one continuation indent: the second line's indent must
  be the first line's (uniform), smaller (a first-line indent: info's 3 spaces, Chinese
  "\\u3000\\u3000"), or, after an item start, the column where the item's text begins (a
  hanging indent). A deeper line after an ordinary first line starts a new run (a program
  listing, a nested block, a new indented paragraph).

Tabs. Every measure (indents, widths, gaps, columns) is taken with tabs expanded to stops every
8 columns, as a terminal shows them, so `man X | col -b` (which writes runs of spaces as tabs)
rewraps as the space-indented rendering does; lines given back unjoined keep their tabs, and a
joined line keeps its first line's indent as it stands.

Evidence. The document's wrap column W is the width that explains the most line breaks as
the work of a greedy wrapper (the next word would not have fitted); it is trusted when it is
32+ columns and explains 5+ breaks and half of those after lines of 24+ columns. A caller that
rendered the text itself gives W (`column`: a man page's line length), trusted as it is, and
may say its wrapper breaks only at spaces (`breaks_cjk=False`: troff), so a Chinese line
stopped short of W by a long run of Han characters, or pushed past it by one, is a wrap. Without a
trusted W, weaker evidence (below) is used only if at most 5% of the document's lines are
wider than 100 columns, i.e. the whole document looks hard-wrapped; once rewrapped, its joined
paragraphs are long lines, so a second rewrap changes nothing. A run of 3+ lines may show its
own column: the widest of its non-last lines, when those are within 25% of each other, 40+
columns and not far below a trusted W. A run is left alone when it looks like code (a "$ ",
"# ", "% " or ">>> " prompt, or psql's "testdb=>"; braces, a trailing backslash or ");";
numbered listing lines; fewer than 55% of its tokens are words, unless a renderer filled and
justified it: 2+ lines at the trusted W with widened gaps and no "[" or "{" argument of a
synopsis; a tab inside the text, unless W is trusted), or like columns (space runs inside
lines that fall at the same place on consecutive lines, or in lines that do not reach W:
justified text widens gaps only in full lines; two spaces after a sentence end do not
count), or like verse (3+
lines, every continuation line starts with a capital letter, and not every line is full — or
every line but the last ends on punctuation, some of it a clause mark).
Inside a run, the break between line A and line B is removed when A is not wider than W + 8
(a wrapped line never runs far past the wrap column), A and B are not both fields of a header
block ("Format: https://...", "Comment:": a Debian copyright file, a control file, mail
headers), and either

1. B's first word (or first CJK character, or an inline code span a writer keeps on one
   line: Org "=M-x org-drill-resume=", reST "``x``", Markdown "`x`") would not have fitted on
   A: width(A) + joint + width(word) ≥ W, against a trusted or the run's own wrap column, or
2. A reaches 80% of the reference width and A ends mid-sentence (no . ! ? : ; … 。 ！ ？ ： ；)
   or B starts in lower case or with a CJK character; or A reaches 75% and both hold. The
   reference width is W when trusted, else the run's own, else the block's widest line (and
   then A must be 40+ columns: nobody wraps prose narrower).

A run set 2-8 columns deeper than the run above it continues that run's last line when the run
above is an overflowed tag (a man page's .TP tag too long for its line: its first line filled
to a trusted W, its last line ending mid-sentence) and the deeper text starts in lower case,
as one wrapped line, or as a single line that ends a sentence (`_tag_reads_on`).

An item marker that can also occur inside a sentence ("(5)", "a)", "-i") does not start an item
when the line before is full under a trusted W and ends mid-sentence. A deeper indent by one
column after a line ending in a CJK character continues the run (w3m moves the space between
a Chinese and a Latin word to the start of the next line). In Markdown (`markdown=True`) a
block indented by 4+ spaces outside a list is code; after a paragraph ending in "::" (reST),
more deeply indented blocks are a literal block; both are kept.

Joined lines. The paragraph keeps its first line as it stands, indent included (the indent
says where the paragraph sits: a list level, a man page option body); each continuation line
loses its indent and its quote prefix. Within a justified run (man pages), runs of spaces
inside the text are collapsed to one. The joint is nothing when either side is a CJK character
or CJK punctuation, nothing after a "/" that ends a URL or path ("https://" +
"www.example.org/"), nothing after a U+2010 hyphen or soft hyphen that splits a word before a
lower-case letter (the hyphen is dropped: "recom‐" + "pile" → "recompile"), nothing after "-"
between letters (the hyphen is kept, "well-known", unless the document spells the word
without it elsewhere and never with it: "recom-" + "pile" → "recompile"), and one space
otherwise; trailing spaces of A are dropped. Nothing else in the text changes: only whitespace
(and the dropped hyphens) ever goes away, and the result rewraps to itself.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

FENCE = re.compile(r"^ {0,3}(```|~~~)")
_QUOTE = re.compile(r"^ {0,3}>(?: ?>)* ?")
_SYNOPSIS_ARGUMENT = re.compile(r"(?:^|\s)[\[{]")
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’」』)）\]】》]*$")
_TERMINATED = re.compile(r"[.!?…。！？:;：；][\"'”’」』)）\]】》*_]*$")
_SENTENCE_END_GAP = re.compile(r"[.!?:;)\"'”’][ ]{2,}")
_SPACE_RUN = re.compile(r"(?<=\S) {2,}(?=\S)")
# A gap a justifying renderer widened: 2+ spaces, or any whitespace run holding a tab.
_GAP_RUN = re.compile(r"(?<=\S)(?: {2,}|[ ]*\t[ \t]*)(?=\S)")
_TAB_STOP = 8
_ITEM = re.compile(
    r"""(?:
        [-*+•·‣▪◦●○■□–—](?=\s)                    # bullet
      | \d{1,3}[.)](?=\s)                         # 1.  1)
      | \d{1,3}(?:\.\d{1,3})+\.(?=\s)              # 10.1.
      | [(（](?:\d{1,2}|[A-Za-z]|[ivx]{2,4}|[一二三四五六七八九十]{1,3})[)）](?=\s|[^\x00-\x7f])
      | (?:[a-z][.)]|[A-Z]\))(?=\s)                 # a) b. A)
      | [ivxIVX]{1,5}[.)](?=\s)                    # iv.
      | [一二三四五六七八九十百]+、                  # 一、
      | -{1,2}[A-Za-z0-9?#][\w.-]*(?:[=\[][^\s,]*)?               # option tag: -a, --all
        (?:,[ ]+-{1,2}[A-Za-z0-9?][\w.-]*(?:[=\[][^\s,]*)?)*
        (?<!\.)(?=[ ]{2,}\S|[ ]*$)                 # ("--quiet, --verbose." ends a sentence)
    )[ \t\u3000]*""",
    re.VERBOSE,
)
# A short tag, two spaces or more, then text (man pages' .TP paragraphs, definition lists).
# Not one space: a wrapped synopsis hangs its lines under the text after the command's name
# ("gcloud beta container ..." over lines indented to "beta"), and that is no paragraph.
_TAG = re.compile(r"[^\s.!?:;,]{1,24} {2,}(?=\S)")
# A line that only names options, in a sentence that lists them ("--quiet, --verbosity.").
_OPTION_LIST = re.compile(r"(?:-{1,2}[A-Za-z][\w-]*[,.]?[ ]+)*-{1,2}[A-Za-z][\w-]*[,.]?")
_BULLET = re.compile(r"[-*+•·‣▪◦●○■□–—]\s")
_STRUCTURE = re.compile(
    r"""(?:
        \#{1,6}(?:\s|$)                            # Markdown heading (indent checked apart)
      | <(?:!--|/?[A-Za-z][\w-]*(?:\s[^>]*)?/?>).*>$  # HTML block
      | \.\.[ ]                                     # reST directive or comment
      | \*[ ]Menu:                                 # info menu header
      | \*[ ][^:]+::                               # info menu entry
      | File:[ ].*Node:                            # info node header
      | [+|].*[-|+]$                               # table ruling or row
      | [─━│┃┌┐└┘├┤┬┴┼═║╔╗╚╝╠╣╦╩╬]              # box drawing
      | \x1f
    )""",
    re.VERBOSE,
)
# First characters that can begin a structure line, an item, a rule or underline: the regular
# expressions run only on lines that start with one of them.
_STRUCTURE_STARTS = frozenset("#<.*F+|\x1f─━│┃┌┐└┘├┤┬┴┼═║╔╗╚╝╠╣╦╩╬")
_ITEM_STARTS = frozenset("-*+•·‣▪◦●○■□–—(（0123456789一二三四五六七八九十百")
_RULE_CHARS = frozenset("-=*_~^\"'`#+.:|")
_UNDERLINE = re.compile(r"""^[ \t]*([-=*_~^"'`#+.:])\1{2,}[ \t]*$""")
# A prompt ("$ ", "# ", ">>> ", psql's "testdb=>" and "user@host testdb=#"), braces, a trailing
# backslash or ");".
_CODE = re.compile(r"^(?:[$#%][ ]|>>> |C:\\>|[\w.@-]+(?: [\w.@-]+)?=[>#])|[{}\\]$|^[{}]|\);$")
# A whitespace-delimited token that is a word, a number, an option named in a list
# ("--account," "--verbosity."), or holds a CJK character.
_WORDS = re.compile(
    r"""(?<!\S)(?:-{1,2}[A-Za-z][\w-]*[,.]|[(\["'“‘«「]*(?:[^\W\d_]+(?:['’.-][^\W\d_]+)*|\d+(?:[.,:]\d+)*)"""
    r"""[)\]"'”’»」.,;:!?…%]*|\S*[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf"""
    r"""\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]\S*)(?!\S)"""
)
_CJK = re.compile(
    "[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
)
_WIDE_RUN = re.compile(
    "[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]+"
)
# An inline code span: Org =verbatim= and ~code~ (no space inside either end, then a space,
# punctuation or the line end), reST ``literal``, Markdown `code`.
_INLINE_CODE = re.compile(
    r"""([=~])[^\s=~](?:[^\n]*?[^\s])?\1(?=[\s.,;:!?)\]'"]|$)|(`+)[^`\n]+?\2(?!`)"""
)
_INLINE_CODE_OPENERS = frozenset("=~`")
_CONTINUES = re.compile(r"[a-z\u00df-\u00ff]")
_LINE_NUMBER = re.compile(r"\d{1,5}(?=\s|$)")
_LAST_LETTERS = re.compile(r"[^\W\d_]+$")
_FIRST_LETTERS = re.compile(r"^[^\W\d_]+")
# A field of an RFC 822-style header block: "Upstream-Name: less", "Comment:", "Subject: x".
_FIELD = re.compile(r"[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*:(?:[ \t]|$)")
_URL_TAIL = re.compile(r"(?:://|^[(\"'“‘]?/|^\(?https?:)\S*/$")
# Where a dropped-or-kept "-" sits until the whole document has been seen (private use).
_HYPHEN_MARK = "\ue010"
_HYPHENS_TO_DROP = "\u2010\u00ad"

_MIN_MEASURED_WIDTH = 24
_MAX_WRAP_COLUMN = 400
_MIN_EXPLAINED_BREAKS = 5
_MIN_EXPLAINED_SHARE = 0.5
_MIN_TRUSTED_COLUMN = 32
_MAX_GUESSED_WRAP = 100
_MAX_LONG_SHARE = 0.05
_NEAR_BEST = 0.9
_MAX_OVERRUN = 8
_MAX_FIRST_LINE_INDENT = 4
_MARKDOWN_CODE_INDENT = 4
_MAX_OWN_SPREAD = 0.25
_MIN_OWN_WRAP = 40
_MIN_GUESSED_WRAP = 40
_MIN_OWN_SHARE = 0.7
_ONE_SIGNAL_SHARE = 0.8
_TWO_SIGNAL_SHARE = 0.75
_MIN_WORD_SHARE = 0.55
# Evidence that a break is a wrap: the next word would not have fitted; the sentence reads on.
_FITS = 2
_READS_ON = 1


def rewrap(
    text: str,
    *,
    markdown: bool = False,
    vocabulary: str | None = None,
    column: int | None = None,
    breaks_cjk: bool = True,
) -> str:
    """Join lines that were broken inside a paragraph (rule: see the module docstring).

    Args:
        text: Text with "\\n" line ends.
        markdown: The text is Markdown: a block indented by 4+ spaces outside a list is code.
        vocabulary: Where to look up how the document spells a word split by "-" at a line
            end (the whole document when `text` is one page of it); `text` when None.
        column: The column the text was wrapped at, when the caller knows it (it rendered
            the text: a man page's line length); trusted as the document's wrap column W
            instead of measuring one. Chinese pages need it: a renderer that cannot break
            between two Han characters runs lines past the column, so the breaks do not
            show the column as English breaks do.
        breaks_cjk: Whether the wrapper could break a line between two CJK characters. GNU
            troff cannot (a Han character has no break point unless a macro package gives it
            one with `.cflags`, which groff does only for Japanese): it breaks at spaces, so
            what would not have fitted on a line is the next space-delimited run
            ("规范的例子如二进制可执行文件(编译后的程序)"), not its first character.

    Returns:
        The text with hard-wrap line breaks (and the hyphens that split words there) removed.
    """
    if "\n" not in text:
        return text
    lines = text.split("\n")
    wrap = _Wrap(column, trusted=True) if column is not None else _wrap_column(lines)
    wrap = dataclasses.replace(wrap, breaks_cjk=breaks_cjk)
    blocks = _Blocks(wrap, marked=_HYPHEN_MARK not in text, markdown=markdown)
    in_fence = False
    for line in lines:
        if FENCE.match(line):
            blocks.flush()
            in_fence = not in_fence
            blocks.out.append(line)
        elif in_fence:
            blocks.out.append(line)
        elif line.strip():
            blocks.block.append(line)
        else:
            blocks.flush()
            blocks.out.append(line)
    blocks.flush()
    joined = "\n".join(blocks.out)
    if blocks.marked and _HYPHEN_MARK in joined:
        joined = _settle_hyphens(joined, text if vocabulary is None else vocabulary)
    return joined


class _Blocks:
    """Blank-line separated blocks, and what a block says about the next ones."""

    def __init__(self, wrap: _Wrap, *, marked: bool, markdown: bool) -> None:
        self.wrap = wrap
        self.marked = marked
        self.markdown = markdown
        self.out: list[str] = []
        self.block: list[str] = []
        # After a paragraph ending in "::" (reST), deeper blocks are a literal block.
        self.literal_above: int | None = None
        self.in_list = False

    def flush(self) -> None:
        block, self.block = self.block, []
        if not block:
            return
        indent = _indent_width(block[0][: len(block[0]) - len(block[0].lstrip())])
        if self.literal_above is not None and indent > self.literal_above:
            self.out.extend(block)
            return
        self.literal_above = None
        if self.markdown:
            starts_item = _ITEM.match(block[0].lstrip()) is not None
            if indent >= _MARKDOWN_CODE_INDENT and not self.in_list:
                self.out.extend(block)
                return
            if starts_item:
                self.in_list = True
            elif indent == 0:
                self.in_list = False
        self.out.extend(_rewrap_block(block, self.wrap, self.marked))
        last = block[-1].strip()
        if last.endswith("::") and not last.startswith(("* ", "..")):
            self.literal_above = indent


def display_width(line: str) -> int:
    """Columns the line takes in a monospace font: East Asian wide characters count 2."""
    if line.isascii():
        return len(line)
    return 2 * len(line) - len(_WIDE_RUN.sub("", line))


# The document's wrap column -----------------------------------------------------------------


@dataclass(frozen=True)
class _Wrap:
    column: int
    trusted: bool
    # Without a trusted column, may a run's own column or a paragraph's shape be used? Only
    # in a document whose lines all look hard-wrapped: after rewrapping, joined paragraphs are
    # long lines, and the lines left alone must not be judged by weaker evidence than before.
    guess: bool = False
    # Could the wrapper break between two CJK characters? (`rewrap`'s breaks_cjk)
    breaks_cjk: bool = True


def _wrap_column(lines: list[str]) -> _Wrap:
    """The width that explains the most line breaks as the work of a greedy wrapper.

    A break after a line of width A, before a word of width w, is a wrap at any column from A
    to A + 1 + w (the word did not fit). Counting, for every column, the breaks it explains is
    one pass with a difference array. The column is the narrowest that explains 90% as many
    breaks as the best; it is trusted when it is 32 or more, and explains at least 5 breaks and
    half of those after lines of 24+ columns.
    """
    explained = [0] * (_MAX_WRAP_COLUMN + 2)
    eligible = filled = long = 0
    previous = ""
    for line in lines:
        text = _columns(line).rstrip()
        body = text.lstrip()
        if body:
            filled += 1
            long += 2 * len(text) > _MAX_GUESSED_WRAP and display_width(text) > _MAX_GUESSED_WRAP
        if not body or (body[0] in _STRUCTURE_STARTS and _STRUCTURE.match(body)) or "|" in body:
            previous = ""
            continue
        if previous:
            width = display_width(previous)
            if _MIN_MEASURED_WIDTH <= width <= _MAX_WRAP_COLUMN:
                eligible += 1
                needed = width + (not _cjk_joint(previous, body)) + display_width(_first_unit(body))
                explained[width] += 1
                explained[min(needed, _MAX_WRAP_COLUMN) + 1] -= 1
        previous = text
    running = 0
    for width, change in enumerate(explained):
        running += change
        explained[width] = running
    best = max(explained)
    # The narrowest column that explains nearly as many breaks as the best: lines a little
    # too long for the column (a long option name in a man page) must not push it outwards.
    column = next(w for w, count in enumerate(explained) if count >= _NEAR_BEST * best)
    trusted = (
        best >= _MIN_EXPLAINED_BREAKS
        and best >= _MIN_EXPLAINED_SHARE * eligible
        and column >= _MIN_TRUSTED_COLUMN
    )
    return _Wrap(column, trusted, guess=not trusted and long <= _MAX_LONG_SHARE * filled)


# Blocks, quote groups and runs ---------------------------------------------------------------


@dataclass(slots=True)
class _Line:
    text: str  # without quote prefix or trailing spaces, tabs expanded (see _columns)
    indent: int  # columns of leading whitespace
    width: int  # display width: the right edge
    text_column: int | None  # where an item's own text begins; None: not an item start
    fixed: bool  # structure: never joined
    body: str  # the text after the indent and any item marker
    weak_item: bool = False  # an item marker that can also occur inside a sentence
    raw: str = ""  # the line as it came: what an unjoined line is given back as
    shown: str = ""  # `text` with its tabs as they came: what a joined line is made of


def _rewrap_block(block: list[str], wrap: _Wrap, marked: bool) -> list[str]:
    if len(block) < 2:
        return block
    out: list[str] = []
    group: list[str] = []
    group_prefix: str | None = None
    for line in block:
        match = _QUOTE.match(line)
        prefix = match.group() if match else ""
        depth = prefix.count(">")
        if group and (group_prefix or "").count(">") != depth:
            out.extend(_rewrap_quoted(group, wrap, marked))
            group = []
        if not group:
            group_prefix = prefix
        group.append(line)
    out.extend(_rewrap_quoted(group, wrap, marked))
    return out


def _rewrap_quoted(group: list[str], wrap: _Wrap, marked: bool) -> list[str]:
    """Rewrap lines that share one quote depth (depth 0: no quote) as blocks of their own."""
    match = _QUOTE.match(group[0])
    if match is None:
        return [text for _, text in _rewrap_lines(group, wrap, marked)]
    prefixes = [(m.group() if m else "") for m in (_QUOTE.match(line) for line in group)]
    inner = [line[len(prefix) :] for line, prefix in zip(group, prefixes, strict=True)]
    inner_wrap = dataclasses.replace(wrap, column=wrap.column - display_width(prefixes[0]))
    out: list[str] = []
    start = 0
    for end in [*(i for i, text in enumerate(inner) if not text.strip()), len(inner)]:
        if end > start:
            for first, text in _rewrap_lines(inner[start:end], inner_wrap, marked):
                out.append(prefixes[start + first] + text)
        if end < len(inner):
            out.append(group[end])
        start = end + 1
    return out


def _rewrap_lines(lines: list[str], wrap: _Wrap, marked: bool) -> list[tuple[int, str]]:
    """Output lines of one block, each with the index of its first input line."""
    if len(lines) < 2:
        return [(0, line) for line in lines]
    parsed = [_parse(line) for line in lines]
    for i in range(1, len(parsed)):
        if parsed[i].body[:1] in _RULE_CHARS and (
            _UNDERLINE.match(parsed[i].text) or _is_table_ruling(parsed[i].text)
        ):
            parsed[i].fixed = True
            parsed[i - 1].fixed = True  # the heading above an underline
    block_widest = max(line.width for line in parsed)
    out: list[tuple[int, str]] = []
    above: list[_Line] = []
    for start, run in _runs(parsed, wrap):
        joined = _join_run(run, wrap, block_widest, marked)
        first_group = joined[1][0] if len(joined) > 1 else len(run)
        if above and _tag_reads_on(above, run[:first_group], wrap):
            # The body goes on with the sentence its overflowed tag began: one paragraph.
            out[-1] = (out[-1][0], _join(out[-1][1], joined[0][1].lstrip(), marked))
            joined = joined[1:]
        for first, text in joined:
            out.append((start + first, text))
        above = run
    return out


def _columns(line: str) -> str:
    """The line as a terminal shows it: tabs expanded to stops every 8 columns.

    Rendered text (`man X | col -b`) indents and spaces with tabs; every measure of structure
    (indents, gaps, widths) is taken on this form, while the text given back keeps its tabs.
    """
    return line.expandtabs(_TAB_STOP) if "\t" in line else line


def _parse(line: str) -> _Line:
    shown = line.rstrip()
    text = _columns(shown)
    body = text.lstrip()
    indent = _indent_width(text[: len(text) - len(body)])
    first = body[:1]
    fixed = (
        first in _STRUCTURE_STARTS
        and bool(_STRUCTURE.match(body))
        and not (first == "#" and indent >= 4)
    )
    text_column: int | None = None
    if not fixed and (first in _ITEM_STARTS or body[1:2] in (".", ")")):
        item = _ITEM.match(body)
        if item:
            weak = not _BULLET.match(item.group())
            body = body[item.end() :]
            text_column = indent + display_width(item.group()) if body else -1
            return _Line(
                text, indent, display_width(text), text_column, fixed, body, weak, line, shown
            )
    return _Line(text, indent, display_width(text), text_column, fixed, body, raw=line, shown=shown)


def _indent_width(indent: str) -> int:
    if indent.isascii() and "\t" not in indent:
        return len(indent)
    return sum(8 if char == "\t" else display_width(char) for char in indent)


def _is_table_ruling(text: str) -> bool:
    body = text.strip()
    return len(body) >= 3 and body[0] in "+|" and set(body) <= set("+|-=: ")


def _runs(lines: list[_Line], wrap: _Wrap) -> Iterable[tuple[int, list[_Line]]]:
    run: list[_Line] = []
    start = 0
    for i, line in enumerate(lines):
        if run and line.weak_item and _item_is_mid_sentence(run[-1], line, wrap):
            line = dataclasses.replace(
                line, text_column=None, fixed=False, body=line.text.lstrip(), weak_item=False
            )
        if run and _continues_run(run, line):
            run.append(line)
            continue
        if run:
            yield start, run
        run, start = [line], i
    if run:
        yield start, run


#: How much deeper than its tag a tag paragraph's body may be set (man's .TP indents: 2-8).
_MAX_TAG_INDENT = 8


def _tag_reads_on(tag: list[_Line], body: list[_Line], wrap: _Wrap) -> bool:
    """Whether `body` (the lines that make the first output line of a run), set deeper than
    the run `tag` above it, continues `tag`'s sentence.

    A man page's tag paragraph (.TP) whose tag does not fit before the body's indent gets the
    tag on lines of its own, wrapped at the tag's indent, and the body below it, deeper. When
    the tag is prose that overflowed a full line and stops mid-sentence, and the body goes on
    in lower case, the writer wrote one paragraph: "Connection resource - Name of the resource
    The arguments in this" / "group can be" over "  used to specify the attributes of this
    resource." A short tag ("-a, --all"), a tag ending on punctuation, a body that starts a
    sentence, and a single body line that does not end one (an example command: "so, for
    example," over "find . -path ./src") are left as they are.
    """
    head, last, first = tag[0], tag[-1], body[0]
    if not wrap.trusted or head.fixed or first.fixed or first.text_column is not None:
        return False
    if not 2 <= first.indent - last.indent <= _MAX_TAG_INDENT:
        return False
    if any(line.indent != head.indent for line in tag[1:]):
        return False
    below = tag[1] if len(tag) > 1 else first
    needed = head.width + 1 + display_width(_first_unit(below.text.lstrip(), wrap.breaks_cjk))
    if head.width < _ONE_SIGNAL_SHARE * wrap.column or needed < wrap.column:
        return False  # the tag's first line was not filled: a label, not overflowed prose
    if _TERMINATED.search(last.text[-8:]) or not _CONTINUES.match(first.body):
        return False
    if _CJK.search(first.body) and not _CJK.search(last.text):
        return False  # a Chinese description under an English line is no continuation
    if len(body) == 1 and not _SENTENCE_END.search(first.text):
        return False
    return _looks_like_prose(tag, wrap, None) and _looks_like_prose(body, wrap, None)


def _item_is_mid_sentence(previous: _Line, line: _Line, wrap: _Wrap) -> bool:
    """A "(5)", "a)" or "-i" that a full line's unfinished sentence wrapped onto this line."""
    if not wrap.trusted or previous.fixed:
        return False
    if previous.text[-1:] in ",;" and not _OPTION_LIST.fullmatch(line.text.lstrip()):
        return False  # "(a) ...,": the next item of a list (a list of options reads on)
    body = line.text.lstrip()
    needed = previous.width + 1 + display_width(_first_unit(body, wrap.breaks_cjk))
    return needed >= wrap.column and not _TERMINATED.search(previous.text[-8:])


def _continues_run(run: list[_Line], line: _Line) -> bool:
    first, last = run[0], run[-1]
    if line.fixed or last.fixed or line.text_column is not None:
        return False
    if len(run) > 1:
        expected = {run[1].indent}
    elif first.text_column is not None:
        # A hanging indent, or a "lazy" continuation back at the item's own indent.
        expected = {first.text_column, first.indent}
    else:
        # A first-line indent is one small step: info's 3 spaces, two ideographic spaces.
        expected = set(range(max(0, first.indent - _MAX_FIRST_LINE_INDENT), first.indent + 1))
        tag = _TAG.match(first.body)
        if tag and line.indent == first.indent + display_width(tag.group()):
            # A tagged paragraph ("0      if OK,", "$else  Commands..."): a hanging indent.
            first.text_column, first.body = line.indent, first.body[tag.end() :]
            return True
    if line.indent in expected:
        return True
    # w3m moves the space between a Chinese and a Latin word to the start of the next line.
    return (
        line.indent - 1 in expected
        and bool(_CJK.match(last.text[-1:]))
        and not _CJK.match(line.body[:1])
    )


# Deciding and joining one run ----------------------------------------------------------------


#: A line of verse ends on these more often than not; a wrapped prose line rarely does.
_LINE_END_PUNCTUATION = frozenset(",;:.!?…，；：。！？、")
#: ...and some of them on a clause mark: prose wrapped exactly at sentence ends is not verse.
_CLAUSE_END = frozenset(",;:，；：、")


def _join_run(
    run: list[_Line], wrap: _Wrap, block_widest: int, marked: bool
) -> list[tuple[int, str]]:
    own = _own_wrap(run, wrap) if len(run) > 1 else None
    if len(run) < 2 or not _looks_like_prose(run, wrap, own):
        return [(i, line.raw) for i, line in enumerate(run)]
    reference = wrap.column if wrap.trusted else (own or block_widest)
    evidence = [
        _wrap_evidence(run[i - 1], run[i], wrap, own, reference) for i in range(1, len(run))
    ]
    capitals = len(run) >= 3 and all(line.text.lstrip()[:1].isupper() for line in run[1:])
    ends = [line.text.rstrip()[-1:] for line in run[:-1]]
    punctuated = all(end in _LINE_END_PUNCTUATION for end in ends) and any(
        end in _CLAUSE_END for end in ends
    )
    if capitals and (punctuated or not all(level == _FITS for level in evidence)):
        # Verse, a list of names, a signature block; unless every line was filled to the column.
        # Lines that all end on punctuation before a capital are verse even when they look full:
        # once the prose around them is joined, verse blocks alone can set a column they fill.
        return [(i, line.raw) for i, line in enumerate(run)]
    groups: list[list[int]] = [[0]]
    for i, level in enumerate(evidence, start=1):
        if level:
            groups[-1].append(i)
        else:
            groups.append([i])
    justified = _is_justified(run, reference)
    out: list[tuple[int, str]] = []
    for group in groups:
        if len(group) == 1:
            out.append((group[0], run[group[0]].raw))
            continue
        joined = _collapse(run[group[0]], justified)
        for i in group[1:]:
            joined = _join(joined, _collapse(run[i], justified).lstrip(), marked)
        out.append((group[0], joined))
    return out


def _looks_like_prose(run: list[_Line], wrap: _Wrap, own: int | None) -> bool:
    tokens = words = 0
    for line in run:
        # A tab inside the text is a table's or a listing's, unless the document was rendered
        # to a known column (a man page through `col -b` spaces with tabs; its columns show
        # as aligned gaps once the tabs are expanded, see _has_columns).
        if _CODE.search(line.body) or ("\t" in line.shown.lstrip() and not wrap.trusted):
            return False
        tokens += len(line.body.split())
        words += len(_WORDS.findall(line.body))
    if _is_numbered_listing(run):
        return False
    if words < _MIN_WORD_SHARE * tokens and not _is_filled(run, wrap):
        return False
    return not _has_columns(run, wrap.column if wrap.trusted else own)


def _is_filled(run: list[_Line], wrap: _Wrap) -> bool:
    """Whether a renderer filled and justified the run: 2+ lines before its last reach the
    trusted column exactly and justification widened gaps in them. No-fill text (listings,
    tables) is never justified, so this is text the renderer wrapped, whatever its words are:
    an option list in a sentence ("sane 同 cread -ignbrk brkint -inlcr ..." in stty(1)). A
    SYNOPSIS is filled too, and stays line by line: a run with a bracketed or braced argument
    ("[--filter=EXPRESSION]", "{-o|--create}") is not taken by this rule."""
    if not wrap.trusted or len(run) < 3:
        return False
    if any(_SYNOPSIS_ARGUMENT.search(line.text) for line in run):
        return False
    if any(abs(line.width - wrap.column) > 1 for line in run[:-1]):
        return False
    return _is_justified(run, wrap.column)


def _has_columns(run: list[_Line], column: int | None) -> bool:
    """Whether space runs inside lines align columns rather than justify lines to a margin.

    Justification widens gaps only in lines that reach the wrap column, and where they fall
    differs from line to line (two lines may agree by chance, three rarely); table columns
    start at the same place on every row. Two spaces after a sentence end are neither.
    """
    streaks: dict[int, int] = {}
    above: set[int] = set()
    gappy = shared = 0
    for line in run:
        text_start = len(line.text) - len(line.body)  # after the indent and any item marker
        if "  " not in line.body:
            streaks, above = {}, set()
            continue
        starts = {
            match.end()
            for match in _SPACE_RUN.finditer(line.text, text_start)
            if line.text[match.start() - 1] not in ".!?:;)\"'”’"
        }
        if starts and (column is None or line.width < column - 1):
            return True
        streaks = {start: streaks.get(start, 0) + 1 for start in starts}
        gappy += bool(starts)
        # Two rows of a table agree on most of their gaps; two justified lines, one with many
        # widened gaps, agree on one or two by chance.
        shared += bool(above) and 2 * len(starts & above) >= max(len(starts), len(above))
        above = starts
        if any(count >= 3 for count in streaks.values()):
            return True
    return gappy == 2 and shared == 1


def _is_numbered_listing(run: list[_Line]) -> bool:
    numbers = [_LINE_NUMBER.match(line.text.lstrip()) for line in run]
    counted = [int(match.group()) for match in numbers if match]
    return len(counted) >= 2 and any(b == a + 1 for a, b in itertools.pairwise(counted))


def _own_wrap(run: list[_Line], wrap: _Wrap) -> int | None:
    """The run's own wrap column, if it has enough lines of one width to show one.

    Short lines of one length are a list, not a narrow wrap: the column must be 40 or more,
    and not far below a trusted document column.
    """
    if len(run) < 3 or not (wrap.trusted or wrap.guess):
        return None
    widths = [line.width for line in run[:-1]]
    widest = max(widths)
    if min(widths) < (1 - _MAX_OWN_SPREAD) * widest or widest < _MIN_OWN_WRAP:
        return None
    if wrap.trusted and widest < _MIN_OWN_SHARE * wrap.column:
        return None
    return widest


def _is_justified(run: list[_Line], reference: int) -> bool:
    """Whether the run's inner space runs come from justification: only full lines have them."""
    gaps = [line for line in run[:-1] if _SPACE_RUN.search(line.body)]
    if not any(_SPACE_RUN.search(_SENTENCE_END_GAP.sub("", line.body)) for line in gaps):
        return False  # none, or only the two spaces some writers put after a sentence
    return all(line.width >= reference - 1 for line in gaps)


def _wrap_evidence(head: _Line, tail: _Line, wrap: _Wrap, own: int | None, reference: int) -> int:
    """How surely the break between two lines of a run is a wrap: _FITS, _READS_ON or 0."""
    if reference <= 0 or (head.width > reference + _MAX_OVERRUN and not _unbreakable(head, wrap)):
        return 0
    body = tail.text.lstrip()
    if _FIELD.match(body) and _FIELD.match(head.text.lstrip()):
        return 0  # one field after another: a header block (DEP-5 copyright, control, mail)
    first_unit = _first_unit(body, wrap.breaks_cjk)
    # A wrapper that breaks only at spaces broke at one, whatever characters are around it.
    gap = 0 if wrap.breaks_cjk and _cjk_joint(head.text, body) else 1
    needed = head.width + gap + display_width(first_unit)
    if (wrap.trusted and needed >= wrap.column) or (own is not None and needed >= own):
        return _FITS
    if not wrap.trusted and (not wrap.guess or head.width < _MIN_GUESSED_WRAP):
        return 0  # nobody wraps prose this narrow; a short line is a line of its own
    mid_sentence = not _TERMINATED.search(head.text[-8:])
    continues = bool(_CONTINUES.match(body) or _CJK.match(body))
    if head.width >= _TWO_SIGNAL_SHARE * reference and mid_sentence and continues:
        return _READS_ON
    if head.width >= _ONE_SIGNAL_SHARE * reference and (mid_sentence or continues):
        return _READS_ON
    return 0


def _unbreakable(line: _Line, wrap: _Wrap) -> bool:
    """A line past the column that the wrapper could not have broken: one run without a space
    ("BIOS范围这个概念，可以参见rfc1001.txt和…这个Net‐") from a wrapper that breaks at spaces."""
    return not wrap.breaks_cjk and " " not in line.body


def _first_unit(body: str, breaks_cjk: bool = True) -> str:
    """What a wrapper could not have split: a word, or one CJK character and its punctuation
    (the whole run up to a space when the wrapper cannot break between CJK characters), or an
    inline code span, which writers keep on one line ("=M-x org-drill-resume=")."""
    if body[:1] in _INLINE_CODE_OPENERS:
        span = _INLINE_CODE.match(body)
        if span:
            return span.group()
    if breaks_cjk and body and _CJK.match(body[0]):
        end = 1
        while end < len(body) and end < 4 and _CJK.match(body[end]) and not body[end].isalnum():
            end += 1
        return body[:end]
    return body.split(" ", 1)[0]


def _collapse(line: _Line, justified: bool) -> str:
    shown = line.shown
    if not justified:
        return shown
    start = len(shown) - len(shown.lstrip())
    if line.text_column is not None and line.text_column >= 0:
        start = _index_at_column(shown, line.text_column)
    return shown[:start] + _GAP_RUN.sub(" ", shown[start:])


def _index_at_column(text: str, column: int) -> int:
    width = 0
    for index, char in enumerate(text):
        if width >= column:
            return index
        width += display_width(char) if char != "\t" else 8 - width % 8
    return len(text)


def _cjk_joint(head: str, tail: str) -> bool:
    return bool(head and tail and (_CJK.match(head[-1]) or _CJK.match(tail[0])))


def _join(head: str, tail: str, marked: bool) -> str:
    head = head.rstrip()
    if not head or not tail:
        return head + tail
    last = head[-1]
    if _cjk_joint(head, tail):
        return head + tail
    if last in _HYPHENS_TO_DROP and len(head) > 1 and head[-2].isalpha():
        if last == "\u00ad" or tail[0].islower() or (tail[0].isupper() and head[-2].isupper()):
            return head[:-1] + tail
        return head + tail
    if last == "-" and len(head) > 1 and head[-2].isalpha():
        if marked and tail[0].islower():
            return head + _HYPHEN_MARK + tail
        return head + tail
    if last == "/" and _URL_TAIL.search(head.rsplit(" ", 1)[-1]):
        return head + tail
    if head.endswith(("http:", "https:")) and tail.startswith("//"):
        return head + tail
    return head + " " + tail


def _settle_hyphens(joined: str, original: str) -> str:
    """Drop "-" at former line ends where the document elsewhere spells the word without it."""
    pieces = joined.split(_HYPHEN_MARK)
    pairs: list[tuple[str, str]] = []
    for left, right in itertools.pairwise(pieces):
        before = _LAST_LETTERS.search(left[:-1])
        after = _FIRST_LETTERS.match(right)
        pairs.append(((before.group() if before else ""), (after.group() if after else "")))
    wanted = {f"{a}{b}".lower() for a, b in pairs} | {f"{a}-{b}".lower() for a, b in pairs}
    seen: set[str] = set()
    for match in re.finditer(r"[^\W\d_]+(?:-[^\W\d_]+)*", original):
        word = match.group().lower()
        if word in wanted:
            seen.add(word)
    out = [pieces[0]]
    for (left, right), piece in zip(pairs, pieces[1:], strict=True):
        solid, hyphened = f"{left}{right}".lower(), f"{left}-{right}".lower()
        if left and right and solid in seen and hyphened not in seen:
            out[-1] = out[-1][:-1]
        out.append(piece)
    return "".join(out)


# Chinese lines in PDF text ------------------------------------------------------------------

# Han characters, and the CJK marks a sentence goes on after (clause marks, opening quotes and
# brackets, the dash) at a line end; Han characters and opening marks at a line start.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_READS_ON_END = re.compile(f"[{_HAN}，、（“‘《「『〔【—]$")
_READS_ON_START = re.compile(f"[{_HAN}（“‘《「『〔【]")
# A Chinese line that starts something: "一、", "（一）", "第三章 …".
_CJK_HEADING_START = re.compile(
    "[一二三四五六七八九十百]+、|[（(][一二三四五六七八九十\\d]{1,3}[)）]"
    "|第[一二三四五六七八九十百千\\d]+[章节条部篇卷]"
)
#: A line shorter than this share of the page's widest line ends its paragraph (a heading,
#: a label, the last line of a paragraph), whatever character it ends with.
_CJK_FULL_LINE_SHARE = 0.7


def join_cjk_lines(text: str, page_lines: list[str]) -> str:
    """Join the line breaks `rewrap` left between two Chinese characters in PDF page text.

    A PDF's lines are set in proportional fonts, so their character counts do not show a wrap
    column and rewrap's evidence is weak for a Chinese paragraph; but a full line that ends
    on a Han character (or a clause mark, an opening quote) before a line that starts with one
    breaks a sentence: "…选择不同的⏎主目录" is "…选择不同的主目录". The joint is nothing, as
    Chinese writes no spaces. Headings, labels and the last lines of paragraphs are not full
    (narrower than 70% of the page's widest line in `page_lines`, the page as extracted), and
    a line that starts a Chinese heading or list item ("一、", "（二）", "第三章") is not
    joined to.

    Args:
        text: One page's text after `rewrap`.
        page_lines: The page's lines as extracted, before rewrap: their widths set "full".

    Returns:
        `text` with those breaks removed; nothing else changes.
    """
    if "\n" not in text:
        return text
    full = _CJK_FULL_LINE_SHARE * max(
        (display_width(line.strip()) for line in page_lines), default=0
    )
    lines = text.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        head = out[-1].rstrip()
        body = line.lstrip()
        if (
            _READS_ON_END.search(head)
            and _READS_ON_START.match(body)
            and not _CJK_HEADING_START.match(body)
            and display_width(head.strip()) >= full
            and _indent_width(line[: len(line) - len(body)])
            <= _indent_width(head[: len(head) - len(head.lstrip())])
        ):
            out[-1] = head + body
        else:
            out.append(line)
    return "\n".join(out)
