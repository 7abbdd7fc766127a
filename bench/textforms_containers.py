"""Container forms of the text-forms benchmark: EPUB, e-mail, OpenDocument text and RTF.

    epub/en   live-manual's packaged EPUB (live-manual-epub), its spine's chapters repacked
              into books of about a fifth of the budget each (the book as written, fewer pages)
    epub/zh   maint-guide-zh-cn's HTML chapters packed into EPUBs (no Chinese EPUB is packaged)
    mail/en,  debian-faq's packaged text (en, zh-cn: hard-wrapped at ~75 columns) in pieces,
    mail/zh   each piece a reply: its second half quoted with "> " as a mail program quotes;
              transfer encodings and charsets vary (8bit, quoted-printable, base64; UTF-8,
              GBK); every other message goes into .mbox files of three, the rest are .eml
    odt/*,    maint-guide's HTML chapters (en, zh-cn) converted by pandoc (a tool nobody here
    rtf/*     wrote), one file per chapter

Ground truth without stitcher's readers: an EPUB's text is the BeautifulSoup text of each
chapter the OPF's spine names (the bench's own reading of the OPF), chapters joined by a blank
line, its prose paragraphs the <p> elements, its structure lines the lines of <pre>; an e-mail's
text is each message's text/plain body as the standard library decodes it
(`get_content()`), with quote prefixes removed (a reader reads quoted text as text), messages
joined by a blank line; ODT and RTF text is `pandoc -t plain --wrap=none` (one line per
paragraph), labelled like any text form.
"""

from __future__ import annotations

import email
import email.policy
import functools
import io
import json
import posixpath
import random
import re
import shutil
import subprocess
import warnings
import zipfile
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import unquote
from xml.etree import ElementTree

from bs4 import XMLParsedAsHTMLWarning

# XHTML chapters are read as HTML on purpose, as the HTML form's pages are.
warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)

PACKAGES = ("live-manual-epub",)
FORMS = (
    ("epub", "en"),
    ("epub", "zh"),
    ("mail", "en"),
    ("mail", "zh"),
    ("odt", "en"),
    ("odt", "zh"),
    ("rtf", "en"),
    ("rtf", "zh"),
)
#: Forms whose candidate files are cut down to the densest (textforms_corpus.keep_densest).
DENSE = frozenset({"mail", "odt", "rtf"})
MARKUP_SUFFIXES = (".epub",)
TEXT_SUFFIXES = (".eml", ".mbox", ".odt", ".rtf")


class ContainerFormError(Exception):
    """A container form could not be built."""


# -- ground truth -------------------------------------------------------------------------------


def epub_chapters(path: Path) -> list[tuple[str, bytes]]:
    """(archive path, markup) of the spine's (X)HTML chapters, in reading order, each once."""
    with zipfile.ZipFile(path) as book:
        container = ElementTree.fromstring(book.read("META-INF/container.xml"))
        opf_path = next(
            e.get("full-path", "") for e in container.iter() if e.tag.endswith("rootfile")
        )
        opf = ElementTree.fromstring(book.read(opf_path))
        base = posixpath.dirname(opf_path)
        items = {
            e.get("id"): posixpath.normpath(
                posixpath.join(base, unquote(e.get("href", "").split("#")[0]))
            )
            for e in opf.iter()
            if e.tag.endswith("}item") and "html" in e.get("media-type", "")
        }
        order = [
            items[e.get("idref")]
            for e in opf.iter()
            if e.tag.endswith("itemref")
            if e.get("idref") in items
        ]
        return [(name, book.read(name)) for name in dict.fromkeys(order)]


def markup_units(path: Path) -> list[bytes]:
    """The HTML documents whose text makes up a markup file's raw text."""
    return [markup for _, markup in epub_chapters(path)]


@functools.lru_cache(maxsize=256)  # pandoc takes a moment; a file is read several times
def text_of(path: Path) -> str:
    """The raw text of a mail, ODT or RTF file (see the module docstring)."""
    suffix = path.suffix.lower()
    if suffix in (".eml", ".mbox"):
        return "\n\n".join(_mail_bodies(path.read_bytes(), suffix == ".mbox"))
    plain = _pandoc(path, "plain").replace("\r\n", "\n")
    # pandoc's plain text marks a superscript "^([58])"; the document's text is "[58]".
    return _SUPERSCRIPT.sub(r"\1", plain)


@functools.lru_cache(maxsize=256)
def code_lines(path: Path) -> frozenset[str]:
    """The lines (stripped) of an ODT's or RTF's code blocks, as pandoc's reader finds them.

    pandoc's plain writer sets a code block 4 spaces in, as it sets a nested list's text, so
    the plain text alone does not say which indented lines are code; its document tree does
    (the RTF reader makes a paragraph in a fixed-pitch font a CodeBlock: maint-guide's <pre>).
    """
    tree = json.loads(_pandoc(path, "json"))
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("t") == "CodeBlock":
                found.update(line.strip() for line in node["c"][1].split("\n") if line.strip())
                return
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(tree["blocks"])
    return frozenset(found)


def _pandoc(path: Path, to: str) -> str:
    rtf = path.suffix.lower() == ".rtf"
    done = subprocess.run(
        ["pandoc", "-f", "rtf", "-t", to, "--wrap=none"]
        if rtf
        else ["pandoc", "-t", to, "--wrap=none", str(path)],
        input=_literal_unicode(path.read_bytes().decode("latin-1")).encode("utf-8")
        if rtf
        else None,
        capture_output=True,
        check=False,
        timeout=120,
    )
    if done.returncode != 0:
        raise ContainerFormError(f"pandoc failed on {path}: {done.stderr.decode()[:200]}")
    return done.stdout.decode("utf-8")


_SUPERSCRIPT = re.compile(r"\^\(([^()\n]*)\)")

# An RTF Unicode escape with its one fallback character (pandoc's writer leaves \uc at 1):
# "\u8220\"", "\u160?", "\u-10179?" (UTF-16 code units, negative above 0x7fff).
_RTF_UNICODE = re.compile(r"\\u(-?\d+) ?(?:\\'[0-9a-fA-F]{2}|[^\\{}])")


def _literal_unicode(rtf: str) -> str:
    """RTF whose Unicode escapes are the characters themselves.

    pandoc before 2.19.2 skips one character too many after a \\uN escape (jgm/pandoc#8264:
    "a\\u160?c" reads "a " — the "c" is lost), so its reading of the escaped source is not the
    document's text: "(see Section\\u160?4.1, \\u8220\"Customization" came out "(see Section
    .1, “ustomization" and Chinese lost every other character. Literal characters in the source
    are read as they are.
    """
    units = _RTF_UNICODE.sub(lambda m: chr(int(m.group(1)) % 0x10000), rtf)
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


_FROM_LINE = re.compile(rb"^From \S+ [^\n]*\d:\d\d[^\n]*\n", re.MULTILINE)
_QUOTED = re.compile(r"^(?:> ?)+", re.MULTILINE)


def _mail_bodies(data: bytes, is_mbox: bool) -> list[str]:
    raws = [m for m in _FROM_LINE.split(data) if m.strip()] if is_mbox else [data]
    bodies = []
    for raw in raws:
        raw = re.sub(rb"^>(>*From )", rb"\1", raw, flags=re.MULTILINE)
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        part = message.get_body(preferencelist=("plain",))
        if part is not None:
            bodies.append(_QUOTED.sub("", str(part.get_content())).strip("\n"))
    return bodies


# -- building -----------------------------------------------------------------------------------


def build(
    form: str, lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    """Write one container form's files into `out` (textforms_corpus.build_form's builder)."""
    builders = {
        "epub": _build_epub,
        "mail": _build_mail,
        "odt": _build_office,
        "rtf": _build_office,
    }
    return builders[form](lang, root, out, budget, rng, form)


_LIVE_MANUAL = "usr/share/doc/live-manual/epub/live-manual.en.epub"
_MAINT_GUIDE_HTML = {
    "en": "usr/share/doc/maint-guide/html",
    "zh": "usr/share/doc/maint-guide-zh-cn/html",
}


def _require(path: Path) -> Path:
    if not path.exists():
        raise ContainerFormError(f"{path} is missing (package not downloaded?)")
    return path


def _build_epub(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random, form: str
) -> tuple[list[str], str]:
    if lang == "en":
        source = _require(root / _LIVE_MANUAL)
        chapters = epub_chapters(source)
        sources = [str(source)]
        note = "live-manual.en.epub's chapters repacked"
    else:
        directory = _require(root / _MAINT_GUIDE_HTML["zh"])
        pages = sorted(p for p in directory.glob("*.zh-cn.html") if p.name != "index.zh-cn.html")
        chapters = [(p.name.replace(".html", ".xhtml"), p.read_bytes()) for p in pages]
        sources = [str(p) for p in pages]
        note = "maint-guide-zh-cn's HTML chapters packed as EPUBs"
    from bs4 import BeautifulSoup

    size = {name: len(BeautifulSoup(markup, "lxml").get_text()) for name, markup in chapters}
    book: list[tuple[str, bytes]] = []
    total = length = number = 0
    for name, markup in chapters:
        if total >= budget:
            break
        book.append((name, markup))
        length += size[name]
        total += size[name]
        if length >= budget // 5:
            (out / f"book{number:02d}.epub").write_bytes(pack_epub(book, lang))
            book, length, number = [], 0, number + 1
    if book:
        (out / f"book{number:02d}.epub").write_bytes(pack_epub(book, lang))
    return sources, f"{note}, {total} characters in books of ~{budget // 5}"


def pack_epub(chapters: list[tuple[str, bytes]], lang: str) -> bytes:
    """An EPUB 2 of the chapters (their markup as it is), spine in the given order."""
    manifest = "".join(
        f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, (name, _) in enumerate(chapters)
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    opf = (
        '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" '
        'version="2.0" unique-identifier="id"><metadata '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">bench</dc:identifier>'
        f"<dc:title>bench</dc:title><dc:language>{lang}</dc:language></metadata>"
        f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" '
            'media-type="application/oebps-package+xml"/></rootfiles></container>',
        )
        archive.writestr("OEBPS/content.opf", opf)
        for name, markup in chapters:
            archive.writestr(f"OEBPS/{name}", markup)
    return buffer.getvalue()


_FAQ = {
    "en": "usr/share/doc/debian/FAQ/debian-faq.en.txt.gz",
    "zh": "usr/share/doc/debian/FAQ/debian-faq.zh-cn.txt.gz",
}


def _build_mail(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random, form: str
) -> tuple[list[str], str]:
    import textforms_corpus as corpus

    source = _require(root / _FAQ[lang])
    pieces = corpus.windows(corpus._read_maybe_gz(source))
    rng.shuffle(pieces)
    messages = []
    total = 0
    for number, piece in enumerate(pieces):
        if total >= 2 * budget:
            break
        messages.append(_reply(piece, number, lang))
        total += len(piece)
    mbox: list[bytes] = []
    for number, message in enumerate(messages):
        if number % 2 == 0:
            (out / f"message{number:03d}.eml").write_bytes(message)
            continue
        mbox.append(message)
        if len(mbox) == 3:
            _write_mbox(out / f"thread{number:03d}.mbox", mbox)
            mbox = []
    if mbox:
        _write_mbox(out / "thread-last.mbox", mbox)
    return [str(source)], f"{len(messages)} replies made of debian-faq pieces"


def _reply(piece: str, number: int, lang: str) -> bytes:
    paragraphs = piece.strip("\n").split("\n\n")
    half = max(1, len(paragraphs) // 2)
    quoted = "\n\n".join(paragraphs[half:])
    quoted = "\n".join(("> " + line) if line.strip() else ">" for line in quoted.split("\n"))
    body = "\n\n".join(paragraphs[:half]) + "\n\nYou wrote:\n" + quoted + "\n\n-- \nA. Writer\n"
    charset = "utf-8"
    if lang == "zh" and number % 2:
        try:
            body.encode("gbk")
            charset = "gbk"
        except UnicodeEncodeError:
            pass
    message = EmailMessage(policy=email.policy.default)
    message["From"] = f"Writer {number} <writer{number}@example.org>"
    message["To"] = "list@example.org"
    message["Subject"] = f"Re: question {number}" if lang == "en" else f"回复：问题 {number}"
    message["Date"] = f"Mon, 06 May 2024 10:{number % 60:02d}:00 +0000"
    cte = ("8bit", "quoted-printable", "base64")[number % 3]
    message.set_content(body, charset=charset, cte=cte)
    return message.as_bytes()


def _write_mbox(path: Path, messages: list[bytes]) -> None:
    out = []
    for number, message in enumerate(messages):
        escaped = re.sub(rb"^(>*From )", rb">\1", message, flags=re.MULTILINE)
        line = f"From writer{number}@example.org Mon May  6 10:{number:02d}:00 2024\n"
        out.append(line.encode() + escaped.rstrip(b"\n") + b"\n\n")
    path.write_bytes(b"".join(out))


def _build_office(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random, form: str
) -> tuple[list[str], str]:
    if not shutil.which("pandoc"):
        raise ContainerFormError("pandoc is not installed (apt-get install pandoc)")
    directory = _require(root / _MAINT_GUIDE_HTML[lang])
    suffix = "en" if lang == "en" else "zh-cn"
    pages = sorted(p for p in directory.glob(f"*.{suffix}.html") if not p.name.startswith("index"))
    for page in pages:
        target = out / page.name.replace(".html", f".{form}")
        done = subprocess.run(
            ["pandoc", "-f", "html", "-s", "-o", str(target), str(page)],
            capture_output=True,
            check=False,
            timeout=300,
        )
        if done.returncode != 0:
            raise ContainerFormError(f"pandoc failed on {page}: {done.stderr.decode()[:200]}")
    return [str(p) for p in pages], f"maint-guide's HTML chapters converted by pandoc to .{form}"
