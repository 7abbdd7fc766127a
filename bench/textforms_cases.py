"""Ground truth of the text-forms benchmark, found without stitcher's own rules.

- `raw_text`: the file text as a naive reader gets it (the seed's splitter runs on this):
  text files decoded; PDF: PDFium's text of each page (pypdfium2 get_text_range, one line per
  visual line; the hyphen PDFium marks U+FFFE put back at the line end it came from), pages
  joined by a blank line; HTML: BeautifulSoup's get_text(). Not pypdf's extract_text: on
  maint-guide's PDF (composite fonts without a space glyph) it runs the words of a line
  together ("foremailreadersanddaemons"), so the sentences, queries and keywords it gave were
  words that no reader that places spaces (stitcher's PDFium loader, a user's PDF viewer) has.
- Prose paragraphs: blank-line separated blocks of the raw text (HTML: the <p> elements) in
  which no line looks like structure by `structure_kind` (an independent heuristic: tables,
  shell prompts and code, aligned columns, man SYNOPSIS sections, info node headers and menus;
  since round 4 also prompts after a host name "example$ ", code with a "# comment", lower-case
  "name=value" configuration lines, a command under a Chinese line ending in a colon, and in
  man pages a Latin line set deeper than the Chinese lines around it). A row of a tag table
  ("F9   由功能键F19…" over "FA   …", text at one column) is a unit of its own. A list item's
  bullet is dropped; the item's text counts as prose. AsciiDoc sources by AsciiDoc's own
  syntax (`adoc_verbatim_lines`, `adoc_unit_lines`): verbatim blocks, tables and literal
  paragraphs are code; markup lines ("+", "[[id]]", ".Title", "term::") are units alone.
- Normalisation: whitespace runs become one space, or nothing when a line break sits next to a
  CJK character; groff's hyphenation (U+2010 at a line end between letters) is undone, an
  ASCII hyphen at a line end is kept and the line joined without a space ("well-known").
- Sentences: split after 。！？, after . ! ? followed by a space and a capital, an opening
  quote, a Han character or a footnote mark ("^[5]", "[1]"), and after a lone "." before a
  lower-case word ("sources.list. apt-get will") unless the word before it is an abbreviation
  ("e.g.", "etc.", "cf.", a single letter, a list numeral "iv."); in Chinese text also after
  a full-width ． that is not a decimal point and after . ! ? followed by a space whatever
  comes next (older Chinese translations end sentences with '. ', also before a command or a
  path);
  40-300 characters (Chinese: 20-300); Chinese cases need >= 10 Han characters, English ones
  none.
- Cases: sentences that no chunk of RecursiveCharacterTextSplitter(250, 50) (default
  separators, on the raw text) contains whole. Forward query: the part of the sentence no later
  chunk holds; backward: the part no earlier chunk holds; keywords: the 2-4 rarest words of the
  sentence by document frequency over the form's paragraphs (Chinese: rjieba words).
- Ambiguous cases are dropped (`drop_ambiguous`): a forward or backward query that also occurs
  outside its sentence in the form's files of that language (not only in word-for-word copies
  of the sentence) does not say which sentence it was cut from.
- Comparison key (`key`): all whitespace and hyphens removed, so passages and sentences compare
  equal however the line breaks inside them were joined.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import textforms_containers as containers

MIN_SENTENCE = {"en": 40, "zh": 20}
MAX_SENTENCE = 300
MIN_QUERY = {"en": 20, "zh": 8}

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK = re.compile(
    "[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
)
_KEY_DROP = re.compile(r"[\s\-\u2010\u00ad]+")

# --- structure heuristic ---------------------------------------------------------------------
_TABLE = re.compile(r"^\s*(?:[|+][-=+|]{3,}|\|.*\|)|[─│┌┐└┘├┤┬┴┼]")
_BOX = re.compile(r"^\s*\*.{20,}\*\s*$")  # a text framed in asterisks (MPL-2.0's disclaimers)
# A shell prompt, also after a host or user name ("example$ tsort call-graph | tac").
_PROMPT = re.compile(r"^\s*(?:[\w@.~:-]*\$|#|%|>>>) +\S")  # man justification widens the gap
# Code followed by a shell comment ("awk '{print $2}'   # print the second field"): the part
# before the "#" holds a quote, a brace, "$", "/" or "=" (checked with no four-word prose run).
_COMMENTED_CODE = re.compile(r"^\s*(?P<code>\S.*?)\s+#\s+\S")
# A command: a name, then an option or an absolute path among its arguments.
_COMMAND_LINE = re.compile(r"^\s*[\w.-]+(?:\s+\S+)*?\s+(?:-{1,2}\w|/\w)")
_CODE_CHARS = re.compile(r"['\"{}$/=|]")
# A configuration or macro line: a name set with "=" and no space around it
# ("set use_from=yes", 'macro generic "<esc>1" ":set from=you@example.com"'); not an option
# ("--prefix=/usr" is prose's way of naming one), not a URL's query ("?git_repo=..."), not an
# upper-case variable quoted in a sentence ('例如： "HOME_URL="https://..."'), not a number
# ("range1=192.168.64.0/24" in a gcloud example sentence).
_ASSIGNMENT = re.compile(r"(?:^|(?<=[\s\"':]))[a-z_]\w*=[\"'A-Za-z_]")
_CODE = re.compile(
    r"""^\s*(?:\#include|\#!/|\#define|[A-Za-z_][A-Za-z0-9_.]*\s*[:+?]?=\s*\S.*[^.。]$|
    .*[{}]\s*$|.*[()\[\]*=_].*;\s*$)""",
    re.VERBOSE,
)
_PROSE_RUN = re.compile(r"\b[a-z]+ [a-z]+ [a-z]+ [a-z]+\b")  # four lowercase words: prose
_WIDENED_GAP = re.compile(r"[^\s.!?:;)\"'”’] {2,}\S")
_COLUMNS = re.compile(r"\S {3,}\S.*\S {3,}\S|\S\t+\S")
_INFO = re.compile(r"^(?:File: .*Node: |\* [^:]+::|\x1f)")
_SYNOPSIS_HEAD = re.compile(r"^(?:SYNOPSIS|概述|总览|语法|大纲|摘要|用法)\b")
_MAN_HEAD = re.compile(r"^[A-Z\u4e00-\u9fff][A-Z0-9 \u4e00-\u9fff()/-]*$")
_BULLET = re.compile(r"^\s*(?:[*+o•·-]|\d{1,3}[.)])\s+")
# AsciiDoc's list markers also nest by repetition ("** fix typos", ".. second level").
_ADOC_BULLET = re.compile(r"^\s*(?:\*{1,5}|\.{1,5}|-|\d{1,3}[.)])\s+")
# PDF cases use the end pattern as it was before the "[1]" and lone-"." rules below were added
# (their own lower-case rule is `_PDF_LOWER_END`), so the PDF rows stay as measured.
_PDF_SENTENCE_END_BASE = (
    r"(?:[。！？][”’」』）)]*)|(?:[.!?][\"'”’)\]]*(?= [A-Z\"'“(‘*_\u4e00-\u9fff]| \^ ?\[\d+\]))"
)
_SENTENCE_END = re.compile(
    r"(?:[。！？][”’」』）)]*)"
    # ("`": a sentence of a markup source can begin with inline code, "``IMPORTED`` targets")
    # ("+": or with AsciiDoc's inline passthrough, "+git log -p+ would help you")
    r"|(?:[.!?][\"'”’)\]]*(?= [A-Z\"'“(‘*_`\u4e00-\u9fff]| \+\w| \^ ?\[\d+\]| \[\d+\](?: |$)))"
    # A lone "." before a lower-case word: a sentence that begins with a command or a name
    # ("/etc/apt/sources.list. apt-get will call dpkg"), unless the word before the "." is an
    # abbreviation (`_ABBREVIATION_BEFORE`).
    r"|(?:(?<![.\s])\.(?= [a-z]))"
)
# Abbreviations a lower-case word may follow inside a sentence (this finder's own list).
_ABBREVIATION_BEFORE = re.compile(
    r"(?:^|[\s(])(?:e\.g|i\.e|etc|cf|vs|viz|al|approx|resp|incl|esp|ca|fig|no|vol|ch|sec|pp?|ed"
    r"|[A-Za-z]|[ivx]{1,4})$",
    re.IGNORECASE,
)
# Chinese text: also the full-width full stop of older texts (between digits it is a decimal
# point), and ". " whatever follows: translations end sentences with it before a command or
# path as before anything else ("区分开来. cr 的缺省状态", "设备号. /dev/mem 设备").
_ZH_SENTENCE_END = re.compile(
    r"(?:[。！？][”’」』）)]*)|(?:(?:(?<!\d)．|．(?!\d))[”’」』）)]*)"
    r"|(?:[.!?][\"'”’)\]]*(?= ))"
)
# A DocBook text footnote mark after a sentence ("... (0-9). ^[16] It is"): part of neither.
# At a paragraph's end too ("... and many more. [28]"): a mark is never a sentence's part.
_FOOTNOTE_MARK = re.compile(r"\^ ?\[\d+\] *|\[\d+\](?: +|$)")
# PDF (LaTeX) footnote numbers as PDFium reads them: "2", "⁴", "1⁷" after a sentence end.
_PDF_NOTE_NUMBER = r"(?:\d{0,2}[⁰¹²³⁴⁵⁶⁷⁸⁹]+|\d{1,2})"
_PDF_FOOTNOTE_REF = re.compile(_PDF_NOTE_NUMBER + r"(?= |$|[\u4e00-\u9fff]) *")
# maint-guide starts sentences with command names in lower case ("... ${misc:Depends}.
# dh_gencontrol(1) generates ...", "... packages. aptitude can be ..."): in PDF text a sentence
# end before a lower-case word counts too, unless the word before the dot is an abbreviation
# or a single letter ("e.g. this", "i.e. the", "etc. and").
_PDF_SENTENCE_END = re.compile(
    _PDF_SENTENCE_END_BASE
    + r"|(?:[.!?][\"'”’)\]]*(?=(?: \d{1,2}| ?\d{0,2}[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
    + r"(?: [A-Z\"'“(‘\u4e00-\u9fff]|$|[\u4e00-\u9fff])))"
)
_PDF_LOWER_END = re.compile(r"[.!?][\"'”’)\]]*(?= [a-z])")
_NOT_AN_END_BEFORE = frozenset({"e.g", "i.e", "etc", "cf", "vs", "approx", "al"})


def _pdf_sentence_ends(text: str) -> list[int]:
    ends = {m.end() for m in _PDF_SENTENCE_END.finditer(text)}
    for match in _PDF_LOWER_END.finditer(text):
        word = text[: match.start()].rsplit(" ", 1)[-1]
        if len(word) > 1 and word.lower() not in _NOT_AN_END_BEFORE:
            ends.add(match.end())
    return sorted(ends)


def key(text: str) -> str:
    """Comparison key: no whitespace, no hyphens."""
    return _KEY_DROP.sub("", text)


def han_count(text: str) -> int:
    return len(_HAN.findall(text))


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def structure_kind(line: str, in_synopsis: bool = False, man: bool = False) -> str | None:
    """What kind of structure a raw line is (None: not structure) — this benchmark's own rule.

    Man pages are justified to the full width, which opens gaps between words: a gapped man
    line counts as columns only when it is shorter than the full width, and a full-width line
    with a widened gap is filled text, not code ("ms=01;31:mc=01;31:...:se=36  with  the  rv"
    in grep(1) is a sentence naming a value).
    """
    if not line.strip():
        return None
    if in_synopsis:
        return "synopsis"
    if _INFO.match(line):
        return "info-node"
    if _TABLE.search(line):
        return "table"
    if _BOX.match(line):
        return "box"
    if _PROMPT.match(line):
        return "code"
    if man and display_width(line) >= 74 and _WIDENED_GAP.search(line.strip()):
        return None  # justified to the full width: text troff filled, never a listing
    if _CODE.match(line) and not _HAN.search(line) and not _PROSE_RUN.search(line):
        return "code"
    commented = _COMMENTED_CODE.match(line)
    code = commented.group("code") if commented else ""
    if _CODE_CHARS.search(code) and not _PROSE_RUN.search(code):
        return "code"
    if (
        _ASSIGNMENT.search(line)
        and not line.lstrip().startswith("-")  # an option list: "-L tag, -m, -O option=value,"
        and not line.rstrip().endswith(".")  # a sentence's end: "... in the form key=value."
        and not _HAN.search(line)
        and not _PROSE_RUN.search(line)
    ):
        return "code"
    if _COLUMNS.search(line.strip()) and not (man and display_width(line) >= 74):
        return "columns"
    return None


@dataclass(frozen=True)
class RawLine:
    number: int
    text: str
    kind: str | None


#: A line with this many Han characters is Chinese prose, not part of a screen listing.
_PROSE_HAN = 6


def label_lines(
    text: str, man: bool, blocks: bool = True, code: frozenset[int] = frozenset()
) -> list[RawLine]:
    """Every line with its structure kind; a block holding a shell prompt is code throughout
    (not with `blocks=False`: a PDF page has no blank lines between its paragraphs).

    In a man page's SYNOPSIS, the first line of each block is labelled (the invocation; the
    lines after it may be its wrapped continuation). `code`: numbers of the lines the
    document itself marks as code (`_code`).
    """
    lines = text.split("\n")
    kinds: list[str | None] = []
    in_synopsis = False
    previous = ""
    for number, line in enumerate(lines):
        if man and line and not line[0].isspace():
            in_synopsis = bool(_SYNOPSIS_HEAD.match(line))
            kinds.append(None)
        else:
            first = not previous.strip() or bool(_SYNOPSIS_HEAD.match(previous))
            known = "code" if number in code else None
            kinds.append(known or structure_kind(line, in_synopsis and man and first, man))
        previous = line
    _free_list_items(lines, kinds, code)
    if not blocks:
        return [
            RawLine(i, line, kind) for i, (line, kind) in enumerate(zip(lines, kinds, strict=True))
        ]
    # A block (between blank lines) with a prompt line is a screen: all its lines are code,
    # except Chinese prose in it ("执行宏 macro-name 所指代的命令. 宏使用 macdef 命令来定义. 本"
    # in ftp(1), where `man` put the text under an example without a blank line). The block
    # is still not prose (its prompt line is code); only the structure sample changes.
    start = 0
    for i in range(len(lines) + 1):
        if i == len(lines) or not lines[i].strip():
            block = range(start, i)
            if any(_PROMPT.match(lines[j]) for j in block):
                for j in block:
                    if han_count(lines[j]) < _PROSE_HAN:
                        kinds[j] = kinds[j] or "code"
            start = i + 1
    return [RawLine(i, line, kind) for i, (line, kind) in enumerate(zip(lines, kinds, strict=True))]


# A bulleted list item of a text rendering ("      * oldstable = buster; stable = ...").
_LIST_ITEM = re.compile(r"^(\s*[*•‣◦·-] +)[A-Za-z\u4e00-\u9fff]")


def _free_list_items(lines: Sequence[str], kinds: list[str | None], code: frozenset[int]) -> None:
    """Un-label "code" on a bulleted list item and on the lines hung under its text.

    debian-faq's "* oldstable = buster; stable = bullseye; testing = bookworm;" over
    "unstable = sid" is one <li> paragraph of its HTML source, wrapped; the name = value and
    ";" heuristics took it for code. A line the document itself marks as code stays code.
    """
    hang: int | None = None
    for number, line in enumerate(lines):
        item = _LIST_ITEM.match(line)
        if item:
            hang = len(item.group(1))
        elif not line.strip() or len(line) - len(line.lstrip()) != hang:
            hang = None
            continue
        if kinds[number] == "code" and number not in code:
            kinds[number] = None


# --- raw text ----------------------------------------------------------------------------------


_TROFF_SUFFIXES = frozenset({".1", ".5", ".8"})
_MAN_FORMS = frozenset({"man", "troff"})
# Man pages saved with `man X | col -b`: runs of spaces written as tabs.
_TAB_MAN_FORMS = frozenset({"mantabs", "mantabs_heldout"})
# Markup sources, whose list items are units even when no blank line separates them.
_LIST_FORMS = frozenset({"org", "rst", "adoc"})


def _code(path: Path, text: str) -> frozenset[int]:
    """Numbers of the lines of `text` (the file's raw text) that the file itself marks as code:
    an ODT's or RTF's code blocks (pandoc's plain text sets them 4 spaces in), a reST file's
    literal blocks, an Org file's verbatim blocks."""
    suffix = path.suffix.lower()
    lines = text.split("\n")
    if suffix in (".odt", ".rtf"):
        known = containers.code_lines(path)
        return frozenset(
            i for i, line in enumerate(lines) if line[:1].isspace() and line.strip() in known
        )
    if suffix == ".rst":
        return rst_literal_lines(lines)
    if suffix == ".org":
        return org_verbatim_lines(lines)
    if suffix in _ADOC_SUFFIXES:
        return adoc_verbatim_lines(lines)
    return frozenset()


# reST directives whose body is a literal block (the others' bodies are prose: note, warning).
_RST_CODE_DIRECTIVE = re.compile(
    r"^\s*\.\. (?:code-block|code|sourcecode|parsed-literal|highlight|signature)::"
)


def rst_literal_lines(lines: Sequence[str]) -> frozenset[int]:
    """The reST literal blocks' lines: the indented block after a paragraph ending in "::" or
    after a code directive (`.. code-block:: cmake`), up to the first line indented no deeper
    than the paragraph or directive (reST's own rule)."""
    found: set[int] = set()
    opener: int | None = None  # indent of the "::" paragraph or code directive above
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if opener is not None and indent > opener:
            found.add(number)
            continue
        opener = None
        if _RST_CODE_DIRECTIVE.match(line) or (
            line.rstrip().endswith("::") and not line.lstrip().startswith("..")
        ):
            opener = indent
    return frozenset(found)


_ORG_BEGIN = re.compile(r"^\s*#\+begin_(src|example|export|verse|comment)\b", re.IGNORECASE)
_ORG_END = re.compile(r"^\s*#\+end_", re.IGNORECASE)


def org_verbatim_lines(lines: Sequence[str]) -> frozenset[int]:
    """The lines of an Org file's verbatim blocks (#+BEGIN_SRC, EXAMPLE, EXPORT, VERSE, COMMENT
    up to #+END_...; Org's own rule), delimiters included."""
    found: set[int] = set()
    inside = False
    for number, line in enumerate(lines):
        if not inside and _ORG_BEGIN.match(line):
            inside = True
        if inside:
            found.add(number)
            if _ORG_END.match(line):
                inside = False
    return frozenset(found)


_ADOC_SUFFIXES = frozenset({".adoc", ".asciidoc"})
# AsciiDoc's delimited blocks whose content is verbatim or not prose: listing (----), literal
# (....), passthrough (++++), comment (////), a fenced block (```), a table (|===, ,===, :===).
_ADOC_VERBATIM_DELIMITER = re.compile(r"^(?:-{4,}|\.{4,}|\+{4,}|/{4,}|`{3}.*|[|,:!]={3,})\s*$")


def _adoc_title_underline(lines: Sequence[str], number: int) -> bool:
    """A two-line section title's underline ("NAME" over "----"): a run of one of = - ~ ^ +
    whose length is within one of the non-blank title line above it (AsciiDoc's rule)."""
    line = lines[number].rstrip()
    if number == 0 or not re.fullmatch(r"([=\-~^+])\1+", line):
        return False
    title = lines[number - 1].rstrip()
    return (
        bool(title.strip())
        and not title.startswith((" ", "\t"))
        and (abs(len(title) - len(line)) <= 1)
    )


def adoc_verbatim_lines(lines: Sequence[str]) -> frozenset[int]:
    """The lines of an AsciiDoc file that are not prose by its own syntax: delimited verbatim
    blocks and tables (`_ADOC_VERBATIM_DELIMITER`, delimiters included, closed by the same
    line) and literal paragraphs (a paragraph whose first line is indented, after a blank
    line; an indented line right under a text line continues that text instead)."""
    found: set[int] = set()
    closer: str | None = None
    literal = False
    previous = ""
    for number, line in enumerate(lines):
        stripped = line.rstrip()
        if closer is not None:
            found.add(number)
            if stripped == closer or (closer == "```" and stripped.startswith("```")):
                closer = None
        elif _ADOC_VERBATIM_DELIMITER.match(stripped) and not _adoc_title_underline(lines, number):
            found.add(number)
            closer = "```" if stripped.startswith("```") else stripped
        elif not stripped:
            literal = False
        elif literal or (line[:1].isspace() and not previous.strip()):
            found.add(number)
            literal = True
        previous = line
    return frozenset(found)


# AsciiDoc lines that stand alone, a unit like a heading (`adoc_unit_lines`): a list
# continuation "+", an anchor or block attribute line ("[[user-name]]", "[source,ruby]"), a
# block title (".Title"), a term of a description list ("What does `x` do?::"), a comment, an
# attribute entry (":name: value"), a block macro ("image::a.png[]", "ifdef::env[]"), a section
# title ("== Usage"), an open, example, sidebar or quote block delimiter.
_ADOC_UNIT = re.compile(
    r"^(?:\+|\[.*\]|\.[^\s.].*|.*(?::{2,4}|;;)|//.*|:!?[\w-]+!?:.*|[\w-]+::\S*\[.*\]"
    r"|=+ .*|--|={4,}|\*{4,}|_{4,})\s*$"
)


def adoc_unit_lines(lines: Sequence[str]) -> set[int]:
    """Lines of an AsciiDoc file that are units of their own (`_ADOC_UNIT`, and a two-line
    section title with its underline): the paragraph above ends there, the one below starts
    after it, so markup is not read as the start or end of a sentence."""
    found: set[int] = set()
    for number, line in enumerate(lines):
        if _adoc_title_underline(lines, number):
            found.update((number - 1, number))
        elif _ADOC_UNIT.match(line):
            found.add(number)
    return found


def raw_text(path: Path) -> str:
    """The file's text as a naive reader gets it (what the seed's splitter is run on)."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return "\n\n".join(_pdfium_page_texts(path))
    if suffix in (".html", ".htm"):
        return str(_soup(path).get_text())
    if suffix in _TROFF_SUFFIXES:
        import textforms_corpus

        return textforms_corpus.render_man(path)  # man page sources: what the reader sees
    if suffix in containers.MARKUP_SUFFIXES:  # EPUB: its chapters' HTML text
        return "\n\n".join(str(soup.get_text()) for soup in _soups(path))
    if suffix in containers.TEXT_SUFFIXES:  # e-mail bodies; ODT, RTF through pandoc
        return containers.text_of(path)
    return path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")


def _pdfium_page_texts(path: Path) -> list[str]:
    """Each page's text as PDFium lays it out, with its own line breaks."""
    import pypdfium2

    document = pypdfium2.PdfDocument(str(path))
    try:
        pages = []
        for page in document:
            text_page = page.get_textpage()
            text = text_page.get_text_range()
            text_page.close()
            page.close()
            # PDFium joins a word hyphenated at a line end and marks the hyphen U+FFFE: the
            # page as printed has the hyphen and the line break.
            pages.append(text.replace("\r\n", "\n").replace("\ufffe", "-\n"))
        return pages
    finally:
        document.close()


def _soup(path: Path) -> object:
    import warnings

    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)
    return BeautifulSoup(path.read_bytes(), "lxml")


def _soups(path: Path) -> list[object]:
    """The HTML documents of a markup file: an HTML page, or an EPUB's chapters."""
    if path.suffix.lower() in containers.MARKUP_SUFFIXES:
        from bs4 import BeautifulSoup

        return [BeautifulSoup(markup, "lxml") for markup in containers.markup_units(path)]
    return [_soup(path)]


_MARKUP = (".html", ".htm", *containers.MARKUP_SUFFIXES)


@dataclass(frozen=True)
class Paragraph:
    start: int  # raw offsets of the block
    end: int


def prose_paragraphs(path: Path, text: str, form: str) -> list[Paragraph]:
    """Blocks of raw text with no structure line (HTML: <p> elements found in the text)."""
    if path.suffix.lower() in _MARKUP:
        found: list[Paragraph] = []
        cursor = 0
        paragraphs = [p for soup in _soups(path) for p in soup.find_all("p")]  # type: ignore[attr-defined]
        for p in paragraphs:
            if p.find_parent(["table", "pre"]) is not None:
                continue
            inner = p.get_text()
            at = text.find(inner, cursor) if inner.strip() else -1
            if at >= 0:
                found.append(Paragraph(at, at + len(inner)))
                cursor = at + len(inner)
        return found
    pdf = path.suffix.lower() == ".pdf"
    # A `col -b` page is a man page, read as a terminal shows it (tabs to 8-column stops) for
    # every measure; offsets still count the file's own characters.
    tabbed = form in _TAB_MAN_FORMS
    man = form in _MAN_FORMS or tabbed
    line_lengths = [len(line) for line in text.split("\n")]
    shown = text.expandtabs(8) if tabbed else text
    labelled = label_lines(shown, man=man, blocks=not pdf, code=_code(path, text))
    full_width = _PDF_FULL_SHARE * _typical_width(text) if pdf else 0.0
    headings = heading_lines([raw.text for raw in labelled], man=man)
    if path.suffix.lower() in _ADOC_SUFFIXES:
        headings |= adoc_unit_lines([raw.text for raw in labelled])
    rows = tag_table_rows([raw.text for raw in labelled]) if not pdf else set()
    displays = latin_displays([raw.text for raw in labelled]) if man else set()
    bullets = _ADOC_BULLET if path.suffix.lower() in _ADOC_SUFFIXES else _BULLET
    paragraphs: list[Paragraph] = []
    offset = 0
    block_start: int | None = None
    block_ok = True
    first_indent = 0
    previous = ""
    for raw in labelled:
        line_end = offset + line_lengths[raw.number]
        if raw.number in headings:
            # A heading is a unit of its own: it ends the paragraph above, and the body below
            # starts a new one (a man page's "GCLOUD WIDE FLAGS" over its indented text).
            if block_start is not None and block_ok:
                paragraphs.append(Paragraph(block_start, offset - 1))
            block_start, block_ok = None, True
        elif pdf and (raw.kind is not None or _PDF_UNIT_START.match(raw.text)):
            # A PDF page has no blank lines: a bullet, a numbered heading or a footnote starts a
            # new unit, and a structure line ends the paragraph (and is left out).
            if block_start is not None and block_ok:
                paragraphs.append(Paragraph(block_start, offset - 1))
            block_start, block_ok = None, True
            if raw.kind is None and not _PDF_HEADING.match(raw.text):
                bullet = _BULLET.match(raw.text) or _PDF_UNIT_START.match(raw.text)
                block_start = offset + (bullet.end() if bullet else 0)
                if display_width(raw.text) < full_width:  # a short item: a unit alone
                    paragraphs.append(Paragraph(block_start, line_end))
                    block_start = None
        elif pdf and _PDF_LONE_NUMBER.match(raw.text):
            # A footnote reference or a page header ("Guide 18 / 57") ends the unit above.
            if block_start is not None and block_ok:
                paragraphs.append(Paragraph(block_start, offset - 1))
            block_start, block_ok = None, True
        elif not raw.text.strip():
            if block_start is not None and block_ok:
                paragraphs.append(Paragraph(block_start, offset - 1))
            block_start, block_ok = None, True
        else:
            indent = len(raw.text) - len(raw.text.lstrip())
            if block_start is not None and raw.number in rows:
                # A row of a tag table ("F9   由功能键F19发送的字符串" over "FA   ..."): each
                # row is a unit; rows without a full stop are not one long sentence.
                if block_ok:
                    paragraphs.append(Paragraph(block_start, offset - 1))
                block_start, block_ok = None, True
            if block_start is not None and form in _LIST_FORMS and bullets.match(raw.text):
                # A list item of a markup source starts a unit without a blank line before it
                # ("...'hide1cloze'.)" over "2. =show1cloze= -- ..."): its syntax says so, and
                # the reader keeps items apart.
                if block_ok:
                    paragraphs.append(Paragraph(block_start, offset - 1))
                block_start, block_ok = None, True
            if block_start is None:
                bullet = bullets.match(raw.text)
                block_start = offset + (bullet.end() if bullet else 0)
                first_indent = indent
            elif (
                man
                and previous.rstrip().endswith((":", "："))
                and (
                    indent > first_indent
                    or (
                        _HAN.search(previous)
                        and not _HAN.search(raw.text)
                        and _COMMAND_LINE.match(raw.text)
                    )
                )
            ):
                # A display that a colon introduces, set deeper than the paragraph (an example
                # command, a list of devices), or a command line with no Han character under a
                # Chinese line ("...的标志):" over "foobar -i /proc/self/fd/0 ..."): not prose.
                block_ok = False
            block_ok = block_ok and raw.kind is None and raw.number not in displays
            width = display_width(raw.text)
            if pdf and (
                width < full_width
                or raw.text.rstrip()[-1:] in ":："
                or (
                    width < _PDF_END_SHARE / _PDF_FULL_SHARE * full_width
                    and _PDF_LINE_END.search(raw.text)
                )
            ):
                # A PDF page has no blank lines: a line that stops short of the text width is
                # the last line of its paragraph (or a heading, a code line: a unit alone); a
                # line ending in a colon introduces the listing below it. Justified lines fill
                # the width, so a line that ends a sentence short of 92% of it ends its
                # paragraph too ("..., ${misc:Depends}, etc." over "dh_shlibdeps(1) ...").
                if block_ok:
                    paragraphs.append(Paragraph(block_start, line_end))
                block_start, block_ok = None, True
        previous = raw.text
        offset = line_end + 1
    if block_start is not None and block_ok:
        paragraphs.append(Paragraph(block_start, len(text)))
    return paragraphs


# A PDF line at least this share of the text width (`_typical_width`) is a full line.
_PDF_FULL_SHARE = 0.8
# ...and a line that ends a sentence ends its paragraph unless it reaches this share. Read on
# maint-guide (English): every line ending in ". ! ?" between 80% and 92% of the width is the
# last line of a paragraph (a justified line inside one is within a few percent of the width).
_PDF_END_SHARE = 0.92
_PDF_LINE_END = re.compile(r"[.!?。！？][\"'”’)\]]*\s*$")


def _typical_width(text: str) -> float:
    """The width of a full line: the 75th percentile of the widths of the text's lines."""
    widths = sorted(display_width(line) for line in text.split("\n") if line.strip())
    return float(widths[(3 * len(widths)) // 4]) if widths else 0.0


_UNIT_END = re.compile(r"[.!?。！？:：;；,，][\"'”’」』）)\]]*$")
_HEADING_WIDTH = 40
_INFO_DEFINITION = re.compile(r"^ -- [A-Z][\w ]*: ")


# PDF lines that start a unit: a bullet, a numbered section heading ("7.7 The interdiff
# command", a unit of its own: see _PDF_HEADING), a footnote ("⁵参看 ...", "1You do not
# ..."). The match is dropped from the unit.
_PDF_UNIT_START = re.compile(
    r"^\s*(?:[•–◦▪]\s+|\d+(?:\.\d+)+\s+(?=\S)|\d{0,2}[⁰¹²³⁴⁵⁶⁷⁸⁹]+|\d{1,2}(?=[A-Z\u4e00-\u9fff]))"
)
# A numbered heading is a unit of its own, left out like a structure line.
_PDF_HEADING = re.compile(r"^\s*\d+(?:\.\d+)+\s+\S.*[^.!?。！？:：]\s*$")
# A line that is only a footnote reference, or a running header with the page number
# ("Debian New Maintainers' Guide 18 / 57"), ends the unit above it and is left out.
_PDF_LONE_NUMBER = re.compile(r"^\s*[\d⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}\s*$|\S.* \d{1,4} / \d{1,4}\s*$")


_TAG_ROW = re.compile(r"^(\s*\S{1,4} {2,})(?=\S)")


def latin_displays(lines: Sequence[str]) -> set[int]:
    """Indexes of lines without Han characters set deeper than the Chinese lines above and
    below them: an example inside Chinese prose ("执行下面的命令" / "     yearistype year type" /
    "来检测某一年的类型")."""

    def indent(line: str) -> int:
        return len(line) - len(line.lstrip())

    found: set[int] = set()
    for i in range(1, len(lines) - 1):
        above, line, below = lines[i - 1], lines[i], lines[i + 1]
        if not (line.strip() and above.strip() and below.strip()) or _HAN.search(line):
            continue
        chinese_around = _HAN.search(above) and _HAN.search(below)
        if chinese_around and indent(line) > max(indent(above), indent(below)):
            found.add(i)
    return found


def tag_table_rows(lines: Sequence[str]) -> set[int]:
    """Indexes of tag-table rows: a short tag (up to 4 characters), 2+ spaces, text; the line
    above or below has the same shape with its text at the same column (termcap's
    capability tables, one-letter option lists)."""
    columns = []
    for line in lines:
        match = _TAG_ROW.match(line)
        columns.append(display_width(match.group(1)) if match else None)
    found: set[int] = set()
    for i, column in enumerate(columns):
        if column is None:
            continue
        if (i > 0 and columns[i - 1] == column) or (
            i + 1 < len(columns) and columns[i + 1] == column
        ):
            found.add(i)
    return found


def heading_lines(lines: Sequence[str], man: bool = False) -> set[int]:
    """Indexes of heading lines: a line with no sentence or clause end that is in capitals or
    short (up to 40 columns, not a list item), right above a line indented deeper; and GNU
    info definition lines.

    This benchmark's own rule, independent of stitcher's: a man page puts its section names
    ("GCLOUD WIDE FLAGS", "描述 DESCRIPTION") at the margin and the body 7 columns in, with
    no blank line between them, and a heading is not part of the first sentence below it. In
    a man page (`man`), a line without Han characters over a deeper line that starts with one
    is a tag too.
    """
    found: set[int] = set()
    in_definition = False
    for i, line in enumerate(lines):
        # A GNU info definition (" -- Function: void f (int a,") and its continuation lines,
        # indented 10, head the description below it.
        if _INFO_DEFINITION.match(line) or (in_definition and line.startswith(" " * 10)):
            found.add(i)
            in_definition = True
        else:
            in_definition = False
    for i, (line, below) in enumerate(itertools.pairwise(lines)):
        body = line.strip()
        if not body or not below.strip() or _UNIT_END.search(body) or _BULLET.match(line):
            continue
        indent = len(line) - len(line.lstrip())
        if len(below) - len(below.lstrip()) <= indent:
            continue
        letters = [ch for ch in body if ch.isalpha() and ch.isascii()]
        capitals = bool(letters) and all(ch.isupper() for ch in letters)
        # A line with no Han character over a deeper Chinese one: a message or an option that
        # the Chinese text below describes (gzip(1)'s "-- not a regular file or directory:
        # ignored" over "如果输入文件不是常规文件或目录，…"), not the start of its sentence.
        described = man and not _HAN.search(body) and bool(_HAN.match(below.strip()))
        if capitals or described or display_width(body) <= _HEADING_WIDTH:
            found.add(i)
    return found


def normalise(
    text: str, start: int, end: int, pdf: bool = False, spaced_breaks: bool = False
) -> tuple[str, list[int]]:
    """Normalised text[start:end] and, per output character, its raw offset.

    `pdf`: a line break after a Latin terminator before a CJK character stays a space (an
    English sentence ending a line above a Chinese one: "outdated.\n现在" is two sentences).
    `spaced_breaks`: the same for a page troff rendered, which breaks lines only at spaces:
    "三维地址.\n线性地址" was "三维地址. 线性地址", a full stop and a space (lilo.conf(5)).
    """
    out: list[str] = []
    where: list[int] = []
    i = start
    while i < end:
        ch = text[i]
        if ch.isspace():
            j = i
            while j < end and text[j].isspace():
                j += 1
            if not out or j >= end:
                i = j
                continue
            before, after = out[-1], text[j]
            newline = "\n" in text[i:j]
            if newline and before == "\u2010" and len(out) > 1 and out[-2].isalpha():
                out.pop()
                where.pop()  # groff hyphenation: "speci‐\nfied" -> "specified"
            elif (pdf or spaced_breaks) and newline and before in ".!?" and _CJK.match(after):
                out.append(" ")
                where.append(i)
            elif newline and (before == "-" or _CJK.match(before) or _CJK.match(after)):
                pass
            else:
                out.append(" ")
                where.append(i)
            i = j
            continue
        out.append(ch)
        where.append(i)
        i += 1
    return "".join(out), where


def split_sentences(text: str, lang: str = "en", pdf: bool = False) -> Iterator[tuple[int, int]]:
    """Spans of sentences in a normalised paragraph (PDF text: `_split_pdf_sentences`)."""
    if pdf:
        yield from _split_pdf_sentences(text)
        return
    start = 0
    for match in (_ZH_SENTENCE_END if lang == "zh" else _SENTENCE_END).finditer(text):
        end = match.end()
        lower_next = text[end + 1 : end + 2].islower()
        if lang != "zh" and lower_next and _ABBREVIATION_BEFORE.search(text, 0, end - 1):
            continue
        if text[start:end].strip():
            yield start, end
        start = end
        while start < len(text) and text[start] == " ":
            start += 1
        mark = _FOOTNOTE_MARK.match(text, start)
        if mark:
            start = mark.end()
    if start < len(text) and text[start:].strip():
        yield start, len(text)


def _split_pdf_sentences(text: str) -> Iterator[tuple[int, int]]:
    """Sentences of PDF text: a footnote number after a sentence end ("many more. 2 Let's",
    "one. ⁴ While", "experimental)。10你可以") belongs to neither sentence, and a sentence end
    followed by one counts as an end; so does one before a lower-case word (`_PDF_LOWER_END`).
    """
    start = 0
    for end in _pdf_sentence_ends(text):
        if end <= start:
            continue
        if text[start:end].strip():
            yield start, end
        start = end
        while start < len(text) and text[start] == " ":
            start += 1
        mark = _PDF_FOOTNOTE_REF.match(text, start)
        if mark:
            start = mark.end()
    if start < len(text) and text[start:].strip():
        yield start, len(text)


# --- cases -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    start: int
    end: int


def seed_chunks(text: str) -> list[Chunk]:
    """The seed's chunks with their raw offsets (LangChain's own start_index)."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=250, chunk_overlap=50, add_start_index=True
    )
    chunks = []
    for doc in splitter.create_documents([text]):
        start = int(doc.metadata["start_index"])
        if start >= 0:
            chunks.append(Chunk(start, start + len(doc.page_content)))
    return chunks


@dataclass
class Case:
    form: str
    lang: str
    file: str  # path of the file below the form directory
    sentence: str  # normalised
    raw_start: int
    raw_end: int
    forward: str
    backward: str
    keywords: list[str]
    halves: tuple[str, str] = ("", "")  # normalised first and second half (keyword hit check)


def _trim_words(text: str, lang: str, side: str) -> str:
    """English: drop the word the chunk boundary cut through (forward: the last, backward: the
    first), so a query is whole words."""
    text = text.strip()
    if lang != "en" or " " not in text:
        return text
    if side == "forward":
        return text[: text.rfind(" ")].strip()
    return text[text.find(" ") + 1 :].strip()


def cut_sentences(
    path: Path, relative: str, form: str, lang: str
) -> tuple[list[Case], list[list[str]]]:
    """Cut sentences of one file as cases (keywords still empty) and the paragraphs' words."""
    text = raw_text(path)
    pdf = path.suffix.lower() == ".pdf"
    chunks = seed_chunks(text)
    cases: list[Case] = []
    paragraph_words: list[list[str]] = []
    for paragraph in prose_paragraphs(path, text, form):
        normal, where = normalise(
            text, paragraph.start, paragraph.end, pdf, spaced_breaks=form in _MAN_FORMS
        )
        if not normal:
            continue
        paragraph_words.append(words(normal, lang))
        for s, e in split_sentences(normal, lang, pdf):
            sentence = normal[s:e].strip()
            if not MIN_SENTENCE[lang] <= len(sentence) <= MAX_SENTENCE:
                continue
            if (lang == "zh") != (han_count(sentence) >= 10) or (
                lang == "en" and han_count(sentence)
            ):
                continue
            rs, re_ = where[s], where[e - 1] + 1
            if any(c.start <= rs and re_ <= c.end for c in chunks):
                continue  # some chunk holds it whole: not a case
            later = [c.start for c in chunks if rs < c.start < re_]
            earlier = [c.end for c in chunks if rs < c.end < re_]
            if not later or not earlier:
                continue
            forward_raw_end, backward_raw_start = min(later), max(earlier)
            forward = normal[s : s + sum(1 for w in where[s:e] if w < forward_raw_end)]
            backward = normal[e - sum(1 for w in where[s:e] if w >= backward_raw_start) : e]
            forward = _trim_words(forward, lang, "forward")
            backward = _trim_words(backward, lang, "backward")
            if min(len(forward), len(backward)) < MIN_QUERY[lang]:
                continue
            middle = len(sentence) // 2
            cases.append(
                Case(
                    form,
                    lang,
                    relative,
                    sentence,
                    rs,
                    re_,
                    forward,
                    backward,
                    [],
                    (sentence[:middle], sentence[middle:]),
                )
            )
    return cases, paragraph_words


def drop_ambiguous(cases: Sequence[Case], files: dict[str, Path]) -> list[Case]:
    """The cases whose forward and backward queries occur nowhere but in their sentence.

    A query that also occurs outside its sentence (the licences repeat paragraphs with other
    words: GPL-2 and LGPL-2 both say "...to these terms and conditions.") cannot say which
    sentence it was cut from, so whether the passage found is "the whole sentence" is not
    defined. A sentence repeated word for word (gcloud's man pages share whole paragraphs)
    stays: every copy is the whole sentence.

    Args:
        cases: Cut sentences of one form and language.
        files: Path below the form directory -> file, for every file of that form and language.
    """
    texts = [key(raw_text(path)) for path in files.values()]

    def count(needle: str) -> int:
        return sum(text.count(needle) for text in texts)

    kept = []
    for case in cases:
        copies = count(key(case.sentence))
        if count(key(case.forward)) <= copies and count(key(case.backward)) <= copies:
            kept.append(case)
    return kept


# --- keywords ----------------------------------------------------------------------------------

_EN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}")
_EN_STOP = frozenset(
    """this that with from have will your there their which when what been were they them then
    than into also more such only some other should would could must about these those each
    does make used uses using here just like very even most many where while after before
    file files""".split()  # noqa: SIM905  (a word list is easier to read this way)
)
_ZH_STOP = frozenset(
    """一个 一些 可以 使用 如果 我们 你的 这个 这些 那些 以及 或者 因为 所以 但是 并且 没有 需要
    进行 通过 其他 所有 时候 已经 就是 还是 可能 应该 这样 不是 它们 他们 你们 自己 之后 之前
    例如 如何 文件""".split()  # noqa: SIM905
)


def words(text: str, lang: str) -> list[str]:
    """Candidate keywords of a text: English words of 4+ letters, Chinese words of 2+ Han."""
    if lang == "zh":
        import rjieba

        return [w for w in rjieba.cut(text) if han_count(w) >= 2 and w not in _ZH_STOP]
    return [w for w in _EN_WORD.findall(text) if w.lower() not in _EN_STOP]


def assign_keywords(cases: Sequence[Case], paragraph_words: Sequence[list[str]]) -> None:
    """The 2-4 rarest words of each case's sentence (document frequency over the paragraphs).

    Three words when the sentence has them; a case with fewer than two keeps an empty list.
    """
    frequency: Counter[str] = Counter()
    for found in paragraph_words:
        frequency.update(set(found))
    for case in cases:
        candidates = list(dict.fromkeys(words(case.sentence, case.lang)))
        candidates.sort(key=lambda w: (frequency.get(w, 0), -len(w), w))
        chosen = candidates[:3]
        case.keywords = chosen if len(chosen) >= 2 else []


def sample(cases: list[Case], count: int, seed: str) -> list[Case]:
    rng = random.Random(seed)
    picked = list(cases)
    rng.shuffle(picked)
    return picked[:count]


# --- structure sample --------------------------------------------------------------------------


@dataclass(frozen=True)
class StructureLine:
    file: str
    line: int
    kind: str
    text: str


def structure_lines(path: Path, relative: str, form: str) -> list[StructureLine]:
    """Lines labelled structure in one file (HTML: the lines of <pre> elements)."""
    if path.suffix.lower() in _MARKUP:
        out = []
        pres = [pre for soup in _soups(path) for pre in soup.find_all("pre")]  # type: ignore[attr-defined]
        for pre in pres:
            for number, line in enumerate(pre.get_text().split("\n")):
                if line.strip():
                    out.append(StructureLine(relative, number, "pre", line))
        return out
    text = raw_text(path)
    lines = text.split("\n")
    tabbed = form in _TAB_MAN_FORMS
    # A page through `col -b` is labelled as the man page a terminal shows: tabs expanded to
    # their 8-column stops, so a gap justification widened (written as a tab) is not a column
    # and a full line is as wide as in a space-indented page. The line itself is reported raw.
    return [
        StructureLine(relative, raw.number, raw.kind, lines[raw.number])
        for raw in label_lines(
            text.expandtabs(8) if tabbed else text,
            man=form in _MAN_FORMS or tabbed,
            blocks=path.suffix.lower() != ".pdf",
            code=_code(path, text),
        )
        if raw.kind is not None and len(raw.text.strip()) >= 3
    ]


def sample_structure(lines: list[StructureLine], count: int, seed: str) -> list[StructureLine]:
    """Up to `count` lines, spread over the kinds (round robin), fixed seed."""
    rng = random.Random(seed)
    by_kind: dict[str, list[StructureLine]] = {}
    for line in lines:
        by_kind.setdefault(line.kind, []).append(line)
    for group in by_kind.values():
        rng.shuffle(group)
    picked: list[StructureLine] = []
    while len(picked) < count and any(by_kind.values()):
        for kind in sorted(by_kind):
            if by_kind[kind] and len(picked) < count:
                picked.append(by_kind[kind].pop())
    return picked


_QUOTE_PREFIX = re.compile(r"^(?:> ?)+")


def loaded_lines(text: str) -> set[str]:
    """The lines of a loaded text (`_spaced`), and of quoted ("> ") lines their text without
    the prefix: an e-mail's raw text (the ground truth) reads quoted lines without it."""
    lines = text.split("\n")
    return {_spaced(line) for line in lines} | {
        _spaced(_QUOTE_PREFIX.sub("", line)) for line in lines if line.startswith(">")
    }


def line_kept(line: str, loaded_lines: set[str]) -> bool:
    """A structure line survives when it is still one whole line of the loaded text."""
    return _spaced(line) in loaded_lines


def _spaced(line: str) -> str:
    """A line with its whitespace runs as one space: what sets a table's cells apart (pandoc
    pads an ODT's or RTF's cells with spaces, stitcher's readers give a tab) is not whether
    the row is a line of its own."""
    return " ".join(line.split())


def percent(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else math.nan
