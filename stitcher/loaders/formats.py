"""One reader per file format: bytes → text plus the metadata the format itself carries."""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stitcher.errors import LoadError
from stitcher.loaders.decoding import decode_text, normalise_newlines
from stitcher.loaders.metadata import clean_mapping, parse_date
from stitcher.loaders.rewrap import FENCE, rewrap


@dataclass
class Extracted:
    """What a format reader found: the text and the metadata stated in the file.

    `meta` uses the final key names; "title", "date" and "tags" may be present with raw values.
    """

    text: str
    meta: dict[str, Any] = field(default_factory=dict)


def read_plain(data: bytes, source: str) -> Extracted:
    """A .txt file: decoded and hard-wrap joined."""
    return Extracted(_trim(rewrap(decode_text(data, source))))


_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")


def read_markdown(data: bytes, source: str) -> Extracted:
    """A .md file: YAML front matter → metadata; the body, hard-wrap joined, is the text.

    The title is front matter `title`, else the first level-1 "# heading" outside code fences.
    """
    text = decode_text(data, source)
    meta: dict[str, Any] = {}
    match = _FRONT_MATTER.match(text)
    if match:
        meta = _parse_front_matter(match.group(1) or "", source)
        text = text[match.end() :]
    if "title" not in meta:
        heading = _first_h1(text)
        if heading:
            meta["title"] = heading
    return Extracted(_trim(rewrap(text)), meta)


def _trim(text: str) -> str:
    """Drop blank lines at the start and whitespace at the end; keep the first line's indent."""
    return _LEADING_BLANK_LINES.sub("", text).rstrip()


def _parse_front_matter(block: str, source: str) -> dict[str, Any]:
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

    Metadata: "page_starts", the offset in the final text where each page begins; /Title;
    /CreationDate; /Keywords → tags.
    """
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadError(f"{source}: the PDF is password-protected; save a decrypted copy")
        pages = [_page_text(page) for page in reader.pages]
        info = reader.metadata
    except LoadError:
        raise
    except PyPdfError as exc:
        raise LoadError(f"{source}: not a readable PDF ({exc})") from None
    except Exception as exc:
        # A malformed file can make pypdf fail in arbitrary ways; it is still one bad file.
        raise LoadError(f"{source}: not a readable PDF ({type(exc).__name__}: {exc})") from None
    page_starts: list[int] = []
    offset = 0
    for page in pages:
        page_starts.append(offset)
        offset += len(page) + 2
    text = "\n\n".join(pages)
    meta: dict[str, Any] = {"page_starts": page_starts}
    if info is not None:
        meta.update(_pdf_info(info))
    return Extracted(text, meta)


def _page_text(page: Any) -> str:
    return rewrap(normalise_newlines(page.extract_text() or "").strip())


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
    import zipfile

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
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".html": read_html,
    ".htm": read_html,
    ".pdf": read_pdf,
    ".docx": read_docx,
}
