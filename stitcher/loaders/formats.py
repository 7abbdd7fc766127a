"""One reader per file format: bytes → text plus the metadata the format itself carries."""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from collections.abc import Callable
from typing import Any

from stitcher.errors import LoadError
from stitcher.loaders.asciidoc import read_asciidoc
from stitcher.loaders.decoding import decode_text, normalise_newlines
from stitcher.loaders.extracted import Extracted
from stitcher.loaders.metadata import clean_mapping, parse_date
from stitcher.loaders.org import read_org
from stitcher.loaders.rewrap import FENCE, display_width, join_cjk_lines, rewrap
from stitcher.loaders.rst import read_rst
from stitcher.loaders.troff import TROFF_SUFFIXES, read_troff


def read_plain(data: bytes, source: str) -> Extracted:
    """A .txt file: decoded and hard-wrap joined."""
    original = decode_text(data, source)
    return Extracted(_trim(rewrap(original)), original=original)


_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")


def read_markdown(data: bytes, source: str) -> Extracted:
    """A .md file: YAML front matter → metadata; the body, hard-wrap joined, is the text.

    The title is front matter `title`, else the first level-1 "# heading" outside code fences.
    """
    original = text = decode_text(data, source)
    meta: dict[str, Any] = {}
    match = _FRONT_MATTER.match(text)
    if match:
        meta = _parse_front_matter(match.group(1) or "", source)
        text = text[match.end() :]
    if "title" not in meta:
        heading = _first_h1(text)
        if heading:
            meta["title"] = heading
    return Extracted(_trim(rewrap(text, markdown=True)), meta, original)


def _trim(text: str) -> str:
    """Drop blank lines at the start and whitespace at the end; keep the first line's indent."""
    return _LEADING_BLANK_LINES.sub("", text).rstrip()


def _parse_front_matter(block: str, source: str) -> dict[str, Any]:
    # yaml, bs4, docx, pypdfium2: each only for its format
    import yaml

    try:
        raw = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise LoadError(f"{source}: front matter is not valid YAML{line}: {problem}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise LoadError(f"{source}: front matter must be a YAML mapping (key: value lines)")
    return clean_mapping(raw)


def _first_h1(text: str) -> str | None:
    in_fence = False
    for line in text.split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            match = _H1.match(line)
            if match:
                return match.group(1).strip()
    return None


# GNU info -----------------------------------------------------------------------------------

# Navigation and bookkeeping, not text: node header lines, the directory entry, and the tag
# table, indirect table and local-variables trailer that follow a "\x1f" separator.
_INFO_NODE_HEADER = re.compile(r"^File: [^,\n]+,\s+Node: [^\n]*$", re.MULTILINE)
_INFO_DIR_ENTRY = re.compile(
    r"^INFO-DIR-SECTION [^\n]*\n|^START-INFO-DIR-ENTRY\n.*?^END-INFO-DIR-ENTRY\n",
    re.MULTILINE | re.DOTALL,
)
_INFO_TABLE = re.compile(
    r"\A\n?(?:(?:Tag Table|Indirect|Local Variables):|End Tag Table).*?(?=\x1f|\Z)", re.DOTALL
)
_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n){2,}")
_INFO_HEADING = re.compile(r"^([^\n]+)\n[*=]{3,}[ \t]*$", re.MULTILINE)


def read_info(data: bytes, source: str) -> Extracted:
    """A GNU info manual (.info): the nodes' text, hard-wrap joined.

    The NUL-backspace index markers are removed by `decode_text`; node separators ("\\x1f"),
    "File: ..., Node: ..." header lines, the directory entry and the tag/indirect tables are
    dropped (a separator leaves a blank line). Title: the first heading underlined with "*" or
    "=" (the manual's top node).
    """
    original = text = decode_text(data, source)
    sections = text.split("\x1f")
    kept = [sections[0], *(_INFO_TABLE.sub("", section) for section in sections[1:])]
    text = "".join(kept).replace("\x7f", "")
    text = _INFO_DIR_ENTRY.sub("", _INFO_NODE_HEADER.sub("", text))
    text = _BLANK_RUN.sub("\n\n", text)  # what the dropped lines leave behind
    meta: dict[str, Any] = {}
    heading = _INFO_HEADING.search(text)
    if heading:
        meta["title"] = heading.group(1).strip()
    return Extracted(_trim(rewrap(text)), meta, original)


# HTML ---------------------------------------------------------------------------------------

_INVISIBLE = ("script", "style", "noscript", "template", "svg", "nav", "head", "iframe", "object")
_BLOCKS = tuple(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "caption",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tr",
        "ul",
    ]
)
# Private-use stand-ins survive whitespace collapsing; they become real breaks at the end.
_PARA, _LINE, _SPACE, _TAB = "\ue000", "\ue001", "\ue002", "\ue003"
_STANDINS = re.compile("[\ue000-\ue003]")
_HTML_SPACE = re.compile(r"[ \t\n\f\r\u00a0]+")
_BREAK_RUN = re.compile(r" ?([\ue000\ue001](?: ?[\ue000\ue001])*) ?")
_DATE_META = ("article:published_time", "date", "dcterms.date", "dc.date")


def read_html(data: bytes, source: str) -> Extracted:
    """An .html file: visible text only; block elements become paragraph breaks.

    Dropped: script, style, noscript, template, svg, nav, iframe, comments and elements with the
    `hidden` attribute. <br> is a line break, table cells are separated by tabs, <pre> keeps its
    whitespace. Metadata: <title>; the first date from meta article:published_time, date,
    dcterms.date, DC.date; meta keywords → tags; meta description.
    """
    from bs4 import BeautifulSoup, Comment

    markup = _STANDINS.sub("", decode_text(data, source))
    soup = BeautifulSoup(markup, "html.parser")
    meta = _html_meta(soup)
    for comment in soup.find_all(string=lambda node: isinstance(node, Comment)):
        comment.extract()
    for tag in soup.find_all(_INVISIBLE):
        tag.decompose()
    for tag in soup.select("[hidden]"):
        tag.decompose()
    for pre in soup.find_all("pre"):
        for node in pre.find_all(string=True):
            node.replace_with(
                str(node).replace("\n", _LINE).replace(" ", _SPACE).replace("\t", _TAB)
            )
    for br in soup.find_all("br"):
        br.replace_with(_LINE)
    for cell in soup.find_all(("td", "th")):
        cell.insert_after(_TAB)
    for block in soup.find_all(_BLOCKS):
        block.insert_before(_PARA)
        block.insert_after(_PARA)
    flat = _HTML_SPACE.sub(" ", soup.get_text())
    flat = _BREAK_RUN.sub(_break_for, flat).strip(" ")
    text = flat.replace(_SPACE, " ").replace(_TAB, "\t")
    text = re.sub(r"[ \t]*\t[ \t]*", "\t", text)
    text = re.sub(r"\t+(?=\n|$)", "", text)
    return Extracted(text.strip("\n"), meta)


def _break_for(match: re.Match[str]) -> str:
    run = match.group(1)
    if _PARA in run:
        return "\n\n"
    return "\n" * min(run.count(_LINE), 2)


def _html_meta(soup: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if soup.title is not None and soup.title.string:
        title = " ".join(soup.title.string.split())
        if title:
            meta["title"] = title
    named: dict[str, str] = {}
    for tag in soup.find_all("meta"):
        name = str(tag.get("name") or tag.get("property") or tag.get("itemprop") or "").lower()
        content = tag.get("content")
        if name and content and name not in named:
            named[name] = str(content).strip()
    for name in _DATE_META:
        date = parse_date(named.get(name))
        if date is not None:
            meta["date"] = date
            break
    if named.get("keywords"):
        meta["tags"] = named["keywords"]
    if named.get("description"):
        meta["description"] = named["description"]
    return meta


# PDF ----------------------------------------------------------------------------------------


def read_pdf(data: bytes, source: str) -> Extracted:
    """A .pdf file: each page's text (hard-wrap joined), pages separated by a blank line.

    The text comes from PDFium (pypdfium2), which places spaces by the glyphs' positions;
    pypdf's extract_text reads many real PDFs (LaTeX and DocBook output with composite fonts
    that have no space glyph, e.g. Debian's maint-guide) without any space between words.
    pypdf still checks encryption and reads the metadata. PDFium joins a word it finds
    hyphenated at a line end and marks the hyphen U+FFFE; the hyphen and the line break are
    put back, and rewrap decides, as for any text, whether the hyphen stays ("Build-Conflicts")
    or goes ("Main-" "tainers").

    Running headers and footers (a line among the first or last two of a page that recurs,
    digits aside, on half the pages or more, with at least three pages) and page-number lines at
    the top or bottom of a page are dropped before joining. A sentence that runs on to the next
    page is not cut there: see `pdf_pages_text` (footnotes move after it). Metadata:
    "page_starts", the offset in the final text where each page's body begins; /Title;
    /CreationDate; /Keywords → tags.
    """
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadError(f"{source}: the PDF is password-protected; save a decrypted copy")
        info = reader.metadata
        if len(reader.pages) == 0:
            # PDFium refuses a valid PDF without pages ("Failed to load document"): it is empty.
            return Extracted("")
        raw_pages = _pdfium_pages(data)
    except LoadError:
        raise
    except PyPdfError as exc:
        raise LoadError(f"{source}: not a readable PDF ({exc})") from None
    except Exception as exc:
        # A malformed file can make pypdf fail in arbitrary ways; it is still one bad file.
        raise LoadError(f"{source}: not a readable PDF ({type(exc).__name__}: {exc})") from None
    text, page_starts = pdf_pages_text(raw_pages)
    meta: dict[str, Any] = {"page_starts": page_starts}
    if info is not None:
        meta.update(_pdf_info(info))
    return Extracted(text, meta)


_PDFIUM_HYPHEN = "\ufffe"


def _pdfium_pages(data: bytes) -> list[str]:
    """The text of every page as PDFium lays it out, one line per visual line."""
    import pypdfium2

    document = pypdfium2.PdfDocument(data)
    try:
        pages = []
        for page in document:
            text_page = page.get_textpage()
            text = text_page.get_text_range()
            text_page.close()
            page.close()
            pages.append(normalise_newlines(text).replace(_PDFIUM_HYPHEN, "-\n"))
        return pages
    finally:
        document.close()


_PAGE_NUMBER = re.compile(
    r"^(?:(?i:page|p\.|seite)\s*|第\s*)?[-–—(\[]?\s*(?:\d{1,4}|[ivxlc]{1,6}|[IVXLC]{1,6})"
    r"\s*[-–—)\]]?(?:\s*(?i:/|of|von)\s*\d{1,4})?\s*页?$"
)
_DIGITS = re.compile(r"\d+")
_EDGE_LINES = 2
_MIN_PAGES_FOR_FURNITURE = 3
_MIN_FURNITURE_SHARE = 0.5


# A footnote at the foot of a page starts with its number run into the text: superscript
# digits ("⁵If there", "1⁷You", "2⁴Use") or plain ones before a capital or a Han character
# ("1In this chapter", "12Debian Policy", "10如果你"); "12 # listing" and "2nd" are not.
_FOOTNOTE_START = re.compile(
    r"^\s*(?:\d{0,2}[⁰¹²³⁴⁵⁶⁷⁸⁹]+(?=\S)|\d{1,3}(?=[A-Z\u3400-\u4dbf\u4e00-\u9fff]))"
)
#: Footnotes fill at most this many lines at the foot of a page.
_MAX_FOOTNOTE_LINES = 12
_ENDS_SENTENCE = re.compile(r"[.!?…。！？:;：；][\"'”’」』)）\]】》]*\s*$")


def pdf_pages_text(raw_pages: list[str]) -> tuple[str, list[int]]:
    """The document's text and where each page's body starts in it.

    Page furniture is dropped and each page's lines are rewrapped. A page whose body ends
    mid-sentence (its last line has no sentence or clause end) is joined to the next page by
    one line break, not a blank line, so the sentence reads on across the page break; the
    footnotes at the foot of that page would sit inside the sentence, so they move after the
    first line of the next page that ends a sentence, between blank lines (or further on, if
    that page too runs on to the next). Other pages are separated by a blank line, their
    footnotes after their body.
    """
    pages = drop_page_furniture(raw_pages)
    vocabulary = "\n".join(pages)
    parts: list[str] = []
    page_starts: list[int] = []
    length = 0
    pending: list[str] = []  # footnotes waiting for the sentence that crossed the page break
    runs_on = False

    def add(piece: str) -> None:
        nonlocal length
        parts.append(piece)
        length += len(piece)

    for number, page in enumerate(pages):
        body_lines, notes = split_footnotes(_join_names_split_at_a_dot(page.strip().split("\n")))
        body = rewrap("\n".join(body_lines).strip(), vocabulary=vocabulary)
        body = join_cjk_lines(body, body_lines)
        note_text = rewrap("\n".join(notes).strip(), vocabulary=vocabulary)
        if length:
            add("\n" if runs_on and body else "\n\n")
        page_starts.append(length)
        lines = body.split("\n") if body else []
        for index, line in enumerate(lines):
            add(line if index == 0 else "\n" + line)
            if pending and _ENDS_SENTENCE.search(line) and index + 1 < len(lines):
                add("\n\n" + "\n\n".join(pending) + "\n")
                pending = []
        following = pages[number + 1] if number + 1 < len(pages) else ""
        runs_on = bool(lines) and _runs_on(lines, following)
        notes = [*pending, note_text] if note_text else pending
        if runs_on:
            pending = notes  # carried on until the sentence ends
        else:
            if notes:
                add(("\n\n" if length else "") + "\n\n".join(notes))
            pending = []
    return "".join(parts), page_starts


# The first line of a page that starts something new: a list item, a shell prompt, a
# numbered heading ("4.4 rules"), a chapter title.
_STARTS_ANEW = re.compile(
    r"^\s*(?:[-*+•·‣▪◦●○■□–—](?:\s|$)|\d{1,3}(?:\.\d{1,3})*[.)]?\s|[$#%] "
    r"|(?:Chapter|Appendix|第)\s*\S)"
)
_PROMPT = re.compile(r"^\s*(?:[$#%]|>>>) ")
#: A line that reads on to the next page fills at least this share of the page's widest line.
_FULL_LINE_SHARE = 0.6


def _runs_on(lines: list[str], next_page: str) -> bool:
    """Whether the last line of a page's body is cut mid-sentence and the next page goes on.

    The line must be a full line of prose (no sentence or clause end, at least
    `_FULL_LINE_SHARE` of the page's widest line: not a short command or a heading) and the next
    page must not start with something new (`_STARTS_ANEW`, a footnote); a shell command
    line does not run on.
    """
    following = next_page.strip().split("\n", 1)[0]
    if not following or _STARTS_ANEW.match(following) or _FOOTNOTE_START.match(following):
        return False
    last = lines[-1]
    if _ENDS_SENTENCE.search(last) or _PROMPT.match(last):
        return False
    widest = max(display_width(line) for line in lines)
    return display_width(last) >= _FULL_LINE_SHARE * widest


_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_ENDS_IN_NAME_DOT = re.compile(r"[A-Za-z0-9*_]\.$")
_STARTS_LOWER = re.compile(r"[a-z]")
_GLOB_DOT = re.compile(r"(?:^|\s)\*[\w.-]*\.$")  # "*." + "orig.tar.gz": a pattern, not an end


def _join_names_split_at_a_dot(lines: list[str]) -> list[str]:
    """Join a line that ends inside a file name cut after a dot ("config." + "sub、").

    LaTeX may break a path or file name after a dot; in a line of Chinese text a Latin "." is
    not a full stop (that is "。"), so "config." at the end of the line and a lower-case word at
    the start of the next are one name. In other lines only a glob ("*." + "orig.tar.gz") is
    joined: there "packages." + "aptitude can ..." is as likely two sentences.
    """
    out: list[str] = []
    for line in lines:
        if (
            out
            and _STARTS_LOWER.match(line)
            and _ENDS_IN_NAME_DOT.search(out[-1])
            and (_HAN.search(out[-1]) or _GLOB_DOT.search(out[-1]))
        ):
            out[-1] += line
        else:
            out.append(line)
    return out


def split_footnotes(lines: list[str]) -> tuple[list[str], list[str]]:
    """A page's lines split into its body and the footnotes at its foot.

    The footnotes start at the first line among the page's last `_MAX_FOOTNOTE_LINES` that
    begins with a footnote number (`_FOOTNOTE_START`) and run to the end of the page; a page
    with no such line, or with nothing above it, is all body.
    """
    first = max(1, len(lines) - _MAX_FOOTNOTE_LINES)
    for index in range(first, len(lines)):
        if _FOOTNOTE_START.match(lines[index]):
            return lines[:index], lines[index:]
    return lines, []


def drop_page_furniture(pages: list[str]) -> list[str]:
    """Remove running headers, footers and page numbers from the text of each page.

    Only the first and last two non-blank lines of a page are candidates. A page-number line
    ("12", "- 12 -", "Page 3 of 10", "iv", "第 3 页") goes when the document has two pages or
    more; another line goes when, with its digits masked, it recurs at an edge of at least half
    of the pages (three pages or more), like "Chapter 2 · Setup   17".
    """
    if len(pages) < 2:
        return pages
    page_lines = [page.split("\n") for page in pages]
    edges = [_edge_indexes(lines) for lines in page_lines]
    counts: dict[str, int] = {}
    for lines, indexes in zip(page_lines, edges, strict=True):
        for key in {_furniture_key(lines[i]) for i in indexes}:
            counts[key] = counts.get(key, 0) + 1
    needed = max(2, _MIN_FURNITURE_SHARE * len(pages))
    repeated = len(pages) >= _MIN_PAGES_FOR_FURNITURE
    out = []
    for lines, indexes in zip(page_lines, edges, strict=True):
        drop = {
            i
            for i in indexes
            if _PAGE_NUMBER.match(lines[i].strip())
            or (repeated and counts[_furniture_key(lines[i])] >= needed)
        }
        out.append("\n".join(line for i, line in enumerate(lines) if i not in drop))
    return out


def _edge_indexes(lines: list[str]) -> list[int]:
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return sorted(set(filled[:_EDGE_LINES] + filled[-_EDGE_LINES:]))


def _furniture_key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()))


def _pdf_info(info: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    getters: dict[str, Callable[[], Any]] = {
        "title": lambda: info.title,
        "date": lambda: info.creation_date,
        "tags": lambda: info.get("/Keywords"),
    }
    for key, get in getters.items():
        try:
            value = get()
        except (ValueError, TypeError, KeyError):
            # A malformed info entry is not worth refusing the document for.
            continue
        if isinstance(value, str) and value.strip():
            meta[key] = value.strip()
        elif isinstance(value, dt.datetime):
            meta[key] = value
    return meta


# DOCX ---------------------------------------------------------------------------------------


def read_docx(data: bytes, source: str) -> Extracted:
    """A .docx file: paragraphs and table rows in document order, separated by blank lines.

    Table cells are separated by tabs. Metadata: core properties title, created, keywords → tags.
    """

    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[str] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                blocks.extend(_table_rows(item))
            else:
                blocks.append(item.text)
        props = document.core_properties
        meta: dict[str, Any] = {}
        if props.title and props.title.strip():
            meta["title"] = props.title.strip()
        if props.created is not None:
            meta["date"] = props.created
        if props.keywords:
            meta["tags"] = props.keywords
    except (PackageNotFoundError, zipfile.BadZipFile) as exc:
        raise LoadError(f"{source}: not a readable .docx file ({exc})") from None
    except Exception as exc:
        # Broken XML inside a valid zip surfaces as lxml, KeyError, ValueError...: one bad file.
        raise LoadError(
            f"{source}: not a readable .docx file ({type(exc).__name__}: {exc})"
        ) from None
    text = "\n\n".join(
        cleaned for cleaned in (normalise_newlines(b).strip() for b in blocks) if cleaned
    )
    return Extracted(text, meta)


def _table_rows(table: Any) -> list[str]:
    rows = []
    for row in table.rows:
        cells = row.cells
        # A merged cell appears once per grid column it spans; keep one copy.
        texts = [
            " ".join(cell.text.split())
            for i, cell in enumerate(cells)
            if i == 0 or cell._tc is not cells[i - 1]._tc
        ]
        rows.append("\t".join(texts))
    return rows


READERS: dict[str, Callable[[bytes, str], Extracted]] = {
    ".txt": read_plain,
    ".info": read_info,
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".html": read_html,
    ".htm": read_html,
    ".pdf": read_pdf,
    ".docx": read_docx,
}


def _register_markup_readers() -> None:
    # Lightweight markup (one module each, made of the file's lines) and man page sources
    # (rendered: text and metadata only).
    READERS.update({".rst": read_rst, ".rest": read_rst})
    READERS.update({".adoc": read_asciidoc, ".asciidoc": read_asciidoc})
    READERS.update({".org": read_org})

    def read_man_source(data: bytes, source: str) -> Extracted:
        return Extracted(*read_troff(data, source))

    READERS.update(dict.fromkeys(TROFF_SUFFIXES, read_man_source))


_register_markup_readers()
