"""Files → `Document`s: discovery, decoding, format readers and metadata.

Public API: `discover` finds files and gives them stable document ids; `load` turns one of them
into a `stitcher.models.Document`.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
from collections.abc import Sequence
from typing import Any

from stitcher.errors import EmptyDocument as EmptyDocument  # it lives in stitcher.errors
from stitcher.errors import LoadError
from stitcher.loaders.compressed import decompress
from stitcher.loaders.discovery import (
    SUPPORTED_EXTENSIONS,
    Discovery,
    SkippedFile,
    SourceFile,
    compile_glob,
    default_source_name,
    describe_skipped,
    discover,
    supported_extensions,
)
from stitcher.loaders.lines import line_starts
from stitcher.loaders.metadata import detect_lang, parse_date, read_sidecar, split_tags, unique
from stitcher.loaders.readers import READERS
from stitcher.models import Document

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "Discovery",
    "EmptyDocument",
    "SkippedFile",
    "SourceFile",
    "compile_glob",
    "default_source_name",
    "describe_skipped",
    "discover",
    "load",
    "supported_extensions",
]


def load(
    src: SourceFile, *, extra_tags: Sequence[str] = (), tags_from_dirs: bool = False
) -> Document:
    """Read one file into a Document with normalised text and typed metadata.

    Formats: .txt, .md/.markdown, .info, .html/.htm, .pdf, .docx (see `stitcher.loaders.formats`);
    .rst/.rest, .adoc/.asciidoc, .org (the source text with its markup, structure kept:
    `stitcher.loaders.rst`, `.asciidoc`, `.org`); man page sources .1-.9, .1p, .3p, .3pm, .man
    (rendered by man or groff: `stitcher.loaders.troff`); .epub, .odt, .rtf, .eml and .mbox,
    each in its own module (`stitcher.loaders.epub`, `odt`, `rtf`, `mail`, which say what their
    text is; an .mbox is one document, its messages in order); and text without an extension
    read as .txt (`SourceFile.read_as`; which files: `stitcher.loaders.sniff`). Encodings:
    see `stitcher.loaders.decoding.decode_text`; hard-wrapped prose lines in .txt, .md, PDF
    pages, plain-text e-mail, the markup formats and rendered man pages are joined (rule in
    `stitcher.loaders.rewrap`). A file compressed with gzip, bzip2 or xz ("changelog.Debian.gz",
    "bash.1.gz") is read by the reader of its name without that suffix, its text (and offsets,
    line numbers) that of the decompressed file (`stitcher.loaders.compressed`, which also caps
    the decompressed size).

    Metadata keys, lowercase [a-z0-9_] names, values str/int/float/bool/datetime/list:

    - every front-matter key (Markdown) and every key of the sidecar "<file>.meta.json"; the
      sidecar wins over the file. ISO-date strings become datetimes.
    - title: front matter `title`, else the first "# heading" (Markdown), HTML <title>, PDF
      /Title, docx core title, the first reST section title, AsciiDoc "= Title", Org
      #+TITLE (else first heading), man ".TH NAME SECTION" as "NAME(SECTION)", EPUB dc:title,
      ODT dc:title, RTF \\title, e-mail Subject (an mbox: the subject all its messages share);
      else the file name without its extension.
    - date (timezone-aware; naive values are taken as UTC): front matter `date`, HTML meta
      article:published_time / date / dcterms.date, PDF /CreationDate, docx created, reST
      :date:, AsciiDoc :revdate: or revision line, Org #+DATE, man .TH date, EPUB dc:date, ODT
      meta:creation-date, RTF \\creatim, e-mail Date (an mbox: its first message's); else the
      file's modification time.
    - author (reST :author:, AsciiDoc author line or :author:, Org #+AUTHOR, EPUB, ODT, RTF),
      and every other field of a reST document's top field list; subject and description (ODT,
      RTF), language as declared (EPUB, ODT); from, to, cc, message_id (.eml); messages, the
      number of messages (.mbox).
    - tags: the document's tags (front matter list or comma-separated string, HTML/PDF/docx
      keywords, reST :tags:/:keywords:, AsciiDoc :keywords:, Org #+FILETAGS/#+KEYWORDS and
      heading tags, EPUB dc:subject, ODT meta:keyword, RTF \\keywords), then `extra_tags`, then,
      with `tags_from_dirs`, the directories between the ingest root and the file; each tag
      once, in that order.
    - lang: "zh", "en" or "other" from the text's characters, unless given explicitly.
    - page_starts (PDF only): offset in `text` where each page begins.
    - line_starts (text formats whose text differs from the file's, e.g. rewrapped): for each
      line of the file, the offset in `text` where it begins (`stitcher.loaders.lines`).

    Args:
        src: A file from `discover`.
        extra_tags: Tags to add to every document (e.g. from --tag).
        tags_from_dirs: Add the directory names between the root and the file as tags.

    Returns:
        The document; `text` is what chunk offsets refer to.

    Raises:
        EmptyDocument: The file is empty or has no text (whitespace only, a PDF of images).
        LoadError: The file is missing, unreadable, binary, undecodable, malformed or of an
            unsupported type; the message names the file.
    """
    reader = READERS.get(src.kind)
    if reader is None:
        raise LoadError(
            f"{src.source}: unsupported file type {src.kind or '(no extension)'!r}; "
            f"supported: {', '.join(supported_extensions())}"
        )
    data, mtime = _read(src)
    if src.compression and data:
        data = decompress(data, src.compression, src.source)
    if not data:
        raise EmptyDocument(f"{src.source}: empty file; skipped")
    extracted = reader(data, src.source)
    del data
    if not extracted.text.strip():
        raise EmptyDocument(f"{src.source}: empty (no text to index); skipped")
    metadata: dict[str, Any] = {**extracted.meta, **read_sidecar(src.path, src.source)}
    metadata["title"] = _title(metadata.get("title"), src)
    volatile = frozenset() if metadata.get("date") is not None else frozenset({"date"})
    # A text made of the file's own lines (`Extracted.original`): a hit's "line" is a line
    # of the file, found in the text as the reader decoded it.
    original = extracted.original
    if original is not None and original != extracted.text:
        metadata["line_starts"] = line_starts(original, extracted.text)
        # Derived from the file and the text alone, and as long as the file has lines.
        volatile |= {"line_starts"}
    metadata["date"] = _date(metadata.get("date"), mtime, src)
    dir_tags = src.doc_id.split("/")[1:-1] if tags_from_dirs else []
    metadata["tags"] = unique([*split_tags(metadata.get("tags")), *extra_tags, *dir_tags])
    lang = metadata.get("lang")
    metadata["lang"] = lang if isinstance(lang, str) and lang else detect_lang(extracted.text)
    return Document(
        doc_id=src.doc_id,
        source=src.source,
        text=extracted.text,
        metadata=metadata,
        volatile=volatile,
    )


def _read(src: SourceFile) -> tuple[bytes, float]:
    try:
        with open(src.path, "rb") as handle:
            mtime = os.fstat(handle.fileno()).st_mtime
            return handle.read(), mtime
    except FileNotFoundError:
        if src.path.is_symlink():
            raise LoadError(f"{src.source}: broken symlink; fix or remove it") from None
        raise LoadError(f"{src.source}: no such file") from None
    except PermissionError:
        raise LoadError(f"{src.source}: permission denied; check the file's permissions") from None
    except IsADirectoryError:
        raise LoadError(f"{src.source}: is a directory, not a file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LoadError(f"{src.source}: symlink loop; fix or remove the link") from None
        raise LoadError(f"{src.source}: cannot read ({exc.strerror or exc})") from None


def _title(value: object, src: SourceFile) -> str:
    if isinstance(value, dt.datetime):
        value = value.date().isoformat()
    title = " ".join(str(value).split()) if value is not None else ""
    return title or _file_title(src)


def _file_title(src: SourceFile) -> str:
    """The file's name without its compression suffix and without the extension its reader
    goes by: "bash.1.gz" → "bash", "README.Debian" → "README.Debian"."""
    name = src.path.name
    name = name[: len(name) - len(src.compression)]
    if src.kind and name.lower().endswith(src.kind):
        name = name[: -len(src.kind)]
    return name or src.path.name


def _date(value: object, mtime: float, src: SourceFile) -> dt.datetime:
    if value is None:
        return dt.datetime.fromtimestamp(mtime, tz=dt.timezone.utc)
    date = parse_date(value)
    if date is None:
        raise LoadError(
            f"{src.source}: 'date' is not a date: {value!r}; use ISO 8601, e.g. 2024-05-01"
        )
    return date
