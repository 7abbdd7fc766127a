"""Files whose name does not say their format: which are documents and how to read them, told
from the name and the first bytes (`classify`).

- A name with a compression suffix ("changelog.Debian.gz", "bash.1.gz") is classified by the
  name without it and by its decompressed content (`stitcher.loaders.compressed`).
- A name with a format's extension is read by that format's reader.
- A name whose first part is a document's by convention ("README", "README.Debian",
  "NEWS.Debian", "copyright", "TODO.source") is read as plain text if it is text.
- A file without an extension is an mbox if it starts like one ("From " line, mail headers),
  plain text if its name is a document's by convention, or if its content reads as prose
  (`looks_like_prose`: not a script, a Makefile or a configuration file).
- Anything else is skipped, with the reason.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

from stitcher.errors import LoadError
from stitcher.loaders import compressed
from stitcher.loaders.decoding import BOMS, INFO_MARKER, decode_text
from stitcher.loaders.mail import looks_like_mbox

#: Names (any case) that are prose by convention, not scripts or configuration: read as .txt.
#: A Makefile, Dockerfile or shell script is text too, but indexing it as prose would only add
#: noise to searches, so other names without an extension are skipped, with that reason.
DOCUMENT_NAMES = frozenset(
    {
        "acknowledgements",
        "acknowledgments",
        "authors",
        "bugs",
        "changelog",
        "changes",
        "contributing",
        "contributors",
        "copying",
        "copyright",
        "credits",
        "faq",
        "hacking",
        "history",
        "install",
        "licence",
        "license",
        "maintainers",
        "news",
        "notice",
        "patents",
        "readme",
        "thanks",
        "todo",
        "upgrading",
    }
)

#: The reader a text file without an extension is read with.
PLAIN_TEXT = ".txt"
#: The reader an mbox without an extension is read with.
MAILBOX = ".mbox"

#: Why a file found under a directory was not loaded (`SkippedFile.reason`).
NOT_SUPPORTED = "not a supported type"
BINARY = "binary"
NOT_A_DOCUMENT = "not prose by its name or content"
TOO_LARGE = compressed.TOO_LARGE
#: `SkippedFile.kind` of a file without an extension.
NO_EXTENSION = "without extension"

#: Enough to tell text from binary; a document's encoding is decided on all of it when loaded.
_SNIFF_BYTES = 8192

# Bytes no text file carries (NUL is checked apart). Tab, newlines, form feed, backspace (man
# pages' overstrike bold), ESC (terminal colours in saved output), and the unit separator and
# DEL of GNU info files (node separators, tag tables) are text.
_BINARY_CONTROLS = bytes([*range(0x01, 0x08), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x1F)])
#: At most this share of the sniffed bytes may be such controls.
_MAX_CONTROL_SHARE = 0.01


def is_document_name(name: str) -> bool:
    """Whether a file named `name` is a document by convention: its part before the first dot
    is one of `DOCUMENT_NAMES`, e.g. "README", "README.Debian", "changelog.Debian"."""
    return name.split(".", 1)[0].lower() in DOCUMENT_NAMES


@dataclass(frozen=True)
class Verdict:
    """How a file is read, or why it is not.

    Attributes:
        reader: The key of the reader in READERS that reads it; "" if it is skipped.
        kind: What the file is called when skipped: its extension (".rst", ".tar.gz"),
            `NO_EXTENSION` (with its compression suffix, if any).
        reason: Why it is skipped (NOT_SUPPORTED, BINARY, NOT_A_DOCUMENT, TOO_LARGE).
    """

    reader: str
    kind: str = ""
    reason: str = ""


def classify(path: Path, readers: Container[str], *, named: bool = False) -> Verdict:
    """Whether and how the file at `path` is read (see the module docstring).

    Args:
        path: The file; its name decides first, then its first bytes.
        readers: The extensions a reader is registered for.
        named: The user named the file itself: any text without an extension is read.
    """
    name = path.name
    compression = compressed.compression_of(name)
    inner = name[: -len(compression)] if compression else name
    extension = _extension(inner)
    kind = extension + compression if extension else compression or NO_EXTENSION
    by_name = extension in readers
    # "Apache-2.0", "GFDL-1.3": a number after the last dot that no reader is registered for is
    # a version, not a type, and the file is told by its content as one without an extension.
    versioned = extension[1:].isdigit()
    if extension and not by_name and not versioned and not is_document_name(inner):
        return Verdict("", kind, NOT_SUPPORTED)
    head, whole = _head(path, compression)
    if head is _TOO_LARGE:
        return Verdict("", kind, TOO_LARGE)
    if by_name:
        return Verdict(extension)
    if head is None:
        if named or compression or is_document_name(inner):
            return Verdict(PLAIN_TEXT)  # damaged or unreadable: the loader names it as such
        return Verdict("", kind, NOT_A_DOCUMENT)
    assert isinstance(head, bytes)
    if not head_is_text(head, whole=whole):
        return Verdict("", kind, BINARY)
    if not extension and looks_like_mbox(head):
        return Verdict(MAILBOX)
    if named or is_document_name(inner):
        return Verdict(PLAIN_TEXT)
    if looks_like_prose(head.decode("utf-8", errors="replace")):
        return Verdict(PLAIN_TEXT)
    return Verdict("", kind, NOT_A_DOCUMENT)


_TOO_LARGE = object()


def _head(path: Path, compression: str) -> tuple[bytes | object | None, bool]:
    """The file's first bytes (decompressed) and whether they are all of it; `_TOO_LARGE` for a
    compressed file over the limit, None if it cannot be read or decompressed."""
    if compression:
        peeked = compressed.peek(path, compression, _SNIFF_BYTES)
        if peeked.too_large:
            return _TOO_LARGE, False
        return peeked.head, peeked.whole
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return None, True
    return head, len(head) < _SNIFF_BYTES


def _extension(name: str) -> str:
    _, dot, ext = name.rpartition(".")
    return "." + ext.lower() if dot and _ else ""


_WORD = re.compile(r"[^\W\d_]{2,}")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# A sentence's end: a letter, then . ! or ? (and a closing quote or bracket) before a space or
# the line's end; or a Chinese full stop.
_SENTENCE_END = re.compile(r"[^\W\d_][.!?][\"')\]]?(?=\s|$)|[。！？]", re.MULTILINE)
# How a line of code or configuration ends: an opening brace, a statement, a continuation.
_CODE_LINE_END = re.compile(r"[{};\\=(,]\s*$")
# A comment line of a script or configuration file.
_COMMENT = re.compile(r"^\s*(?:#|//|;|%|--\s)")
#: Prose: at least this share of the non-blank lines (comment lines aside) are lines of words
_MIN_PROSE_LINES = 0.6
#: ... and sentences end now and then: at least this many times per 100 words (code and
#: configuration have almost no sentence ends outside their comments).
_MIN_SENTENCE_ENDS = 0.5


def looks_like_prose(text: str) -> bool:
    """Whether `text` (a file's first few kilobytes) reads as prose written for people, not as
    a script, a Makefile, a configuration or data file.

    Comment lines ("#", "//", ";", "%", "-- ") are set aside: a licence header in comments says
    nothing about what follows. Prose: no "#!" line; at least `_MIN_PROSE_LINES` of the other
    non-blank lines hold three words or more, are mostly letters and do not end like a line of
    code (";", "{", "\\", "=", "(", ","); and sentences end now and then, `_MIN_SENTENCE_ENDS`
    per 100 words (a Han character counts half a word). A Makefile or an fstab fails the first
    test, a list of names or numbers the second.
    """
    if text.startswith("#!"):
        return False
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    lines = [line for line in lines if not _COMMENT.match(line)]
    if not lines:
        return False
    prose_lines = sum(1 for line in lines if _is_prose_line(line))
    body = "\n".join(lines)
    words = len(_WORD.findall(body)) + len(_HAN.findall(body)) // 2
    ends = len(_SENTENCE_END.findall(body))
    return (
        prose_lines >= _MIN_PROSE_LINES * len(lines)
        and words > 0
        and ends * 100 >= _MIN_SENTENCE_ENDS * words
    )


def _is_prose_line(line: str) -> bool:
    if _CODE_LINE_END.search(line):
        return False
    words = len(_WORD.findall(line)) + len(_HAN.findall(line)) // 2
    filled = len(line) - line.count(" ") - line.count("\t")
    letters = sum(1 for char in line if char.isalpha())
    return words >= 3 and letters >= 0.6 * filled


def head_is_text(head: bytes, *, whole: bool = True) -> bool:
    """Whether these first bytes of a file are text: no NUL byte (except in GNU info markers),
    almost no other control characters, and an encoding `decode_text` accepts.

    Args:
        head: The file's first bytes.
        whole: `head` is the whole file (else its last line may be cut mid-character).
    """
    if not head:
        return True
    for bom, encoding in BOMS:
        if head.startswith(bom):  # UTF-16 and UTF-32 text is full of NUL bytes
            try:
                codecs.getincrementaldecoder(encoding)().decode(head[len(bom) :], final=whole)
            except UnicodeDecodeError:
                return False
            return True
    if b"\x00" in head:
        head = INFO_MARKER.sub(b"", head)
        if b"\x00" in head:
            return False
    controls = len(head) - len(head.translate(None, _BINARY_CONTROLS))
    if controls > _MAX_CONTROL_SHARE * len(head):
        return False
    if not whole and b"\n" in head:
        head = head[: head.rindex(b"\n") + 1]
    try:
        decode_text(head, "")
    except LoadError:
        return False
    return True
