"""Bytes of a text file → str: BOMs, UTF-8, GB18030, then charset-normalizer's guess."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from stitcher.errors import LoadError

# UTF-32 first: its little-endian BOM begins with the UTF-16 little-endian one.
#: Byte-order marks and their encodings.
BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# One GB18030 character of two or four bytes. Searching left to right keeps the alignment: lead
# bytes are never ASCII, and a match swallows its trail bytes. Listed first: GB2312 rows 1-9
# (CJK punctuation, full-width forms, kana, Greek, Cyrillic) and level-1 hanzi, the 3755 common
# characters that make up nearly all of real Chinese text. Latin-1 or Shift-JIS bytes misread
# as GB18030 land almost entirely outside them.
_GB_CHAR = re.compile(
    rb"(?P<common>[\xa1-\xa9\xb0-\xd7][\xa1-\xfe])"
    rb"|[\x81-\xfe](?:[\x30-\x39][\x81-\xfe][\x30-\x39]|[\x40-\x7e\x80-\xfe])"
)
_GB_SAMPLE_BYTES = 1 << 18
_MIN_GB_COMMON_SHARE = 0.6

# GNU info files mark index entries and images with NUL-backspace brackets, e.g.
# "\0\b[index\0\b]": the only NUL bytes a text file may carry. Bounded, so a stray opener in a
# binary file cannot make the search run far.
INFO_MARKER = re.compile(rb"\x00\x08\[[^\x00]{0,4096}?\x00\x08\]")

# charset-normalizer's "chaos" is the share of the decoded text that looks like mojibake.
_MAX_GUESS_CHAOS = 0.1

# A legacy code page is guessed only on this many non-ASCII bytes at least: one or two odd bytes
# in ASCII text ("\xc3(" read as cp1250 "Ă(") are far more often a damaged UTF-8 file than
# a Windows-1252 one, and any code page decodes them to something.
_MIN_LEGACY_BYTES = 3

# Bytes that are not UTF-8 may be replaced (U+FFFD, with a notice) when there are at most this
# many of them, or at most this share of the file: a stray byte in a long text, not a file in
# an encoding nobody recognised.
_MIN_REPAIR_ALLOWANCE = 16
_MAX_REPAIR_SHARE = 0.005

#: The notices of the `noted_repairs` block being run (None outside one).
_REPAIRS: ContextVar[list[str] | None] = ContextVar("stitcher_repairs", default=None)


@contextmanager
def noted_repairs() -> Iterator[list[str]]:
    """Collect, in the list this yields, a notice for each text `decode_text` repaired inside
    the block (bytes that were not UTF-8 replaced by U+FFFD)."""
    notes: list[str] = []
    token = _REPAIRS.set(notes)
    try:
        yield notes
    finally:
        _REPAIRS.reset(token)


def decode_text(data: bytes, source: str) -> str:
    """Decode the bytes of a text file and normalise its newlines.

    Tried in this order: a BOM (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE; decoded strictly, BOM dropped);
    strict UTF-8; UTF-8 with the few bytes that are not UTF-8 replaced by U+FFFD, when valid
    multi-byte UTF-8 characters outnumber them; strict GB18030, accepted only if at least 60% of
    its multi-byte characters are common hanzi (GB2312 level 1) or CJK punctuation/full-width
    forms; with at least 3 non-ASCII bytes, charset-normalizer's best guess, accepted only if its
    chaos (mojibake share) is at most 10% (Windows-1252 when it ties with the best); last, UTF-8
    with replacements again, if at most 16 bytes (or 0.5% of them) are not UTF-8.
    A repaired text is reported to the enclosing `noted_repairs` block, if any.
    "\\r\\n" and "\\r" become "\\n".
    Without a BOM, GNU info markers ("\\0\\b[index\\0\\b]", "\\0\\b[image ...\\0\\b]") are removed
    before decoding; any other NUL byte makes the file binary.

    Args:
        data: The raw file content.
        source: The path shown in error messages.

    Returns:
        The decoded text.

    Raises:
        LoadError: The file is empty, contains NUL bytes outside UTF-16/32 ("binary file"), or its
            encoding cannot be determined.
    """
    if not data:
        raise LoadError(f"{source}: empty file; nothing to load")
    text, replaced = _decode(data, source)
    if replaced:
        notes = _REPAIRS.get()
        if notes is not None:
            notes.append(
                f"{source}: {replaced} byte sequence(s) that are not UTF-8 replaced by U+FFFD "
                "(a damaged file, or one in a legacy encoding: re-save it as UTF-8)"
            )
    if text.startswith("\ufeff"):
        text = text[1:]
    return normalise_newlines(text)


def normalise_newlines(text: str) -> str:
    """Turn Windows and old-Mac line ends into "\\n"."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _decode(data: bytes, source: str) -> tuple[str, int]:
    """The text, and how many byte sequences in it were replaced by U+FFFD."""
    for bom, encoding in BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding), 0
            except UnicodeDecodeError as exc:
                raise LoadError(
                    f"{source}: starts with a {encoding} byte-order mark but is not valid "
                    f"{encoding} (byte {exc.start + len(bom)}); re-save it as UTF-8"
                ) from None
    if b"\x00" in data:
        data = INFO_MARKER.sub(b"", data)
    if b"\x00" in data:
        raise LoadError(f"{source}: binary file (contains NUL bytes); only text can be loaded")
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        pass
    repaired = data.decode("utf-8", errors="replace")
    # U+FFFD the file itself spelled (EF BF BD) is text, not a repair.
    bad = repaired.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    good = len(repaired) - len(repaired.encode("ascii", errors="ignore")) - bad
    few = bad <= max(_MIN_REPAIR_ALLOWANCE, _MAX_REPAIR_SHARE * len(data))
    if few and good > bad:
        return repaired, bad
    gb_text = _decode_gb18030(data)
    if gb_text is not None:
        return gb_text, 0
    if len(data) - len(data.decode("ascii", errors="ignore")) >= _MIN_LEGACY_BYTES:
        guessed = _guess(data)
        if guessed is not None:
            return guessed, 0
    if few:
        return repaired, bad
    raise LoadError(f"{source}: cannot detect the text encoding; re-save the file as UTF-8")


def _decode_gb18030(data: bytes) -> str | None:
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        return None
    return text if _looks_like_chinese(data[:_GB_SAMPLE_BYTES]) else None


def _looks_like_chinese(data: bytes) -> bool:
    total = common = 0
    for match in _GB_CHAR.finditer(data):
        total += 1
        common += match.lastgroup == "common"
    return common >= _MIN_GB_COMMON_SHARE * total


def _guess(data: bytes) -> str | None:
    # only for bytes not UTF-8
    from charset_normalizer import from_bytes

    matches = from_bytes(data)
    best = matches.best()
    if best is None or best.chaos > _MAX_GUESS_CHAOS:
        return None
    # Short Western text fits a dozen single-byte code pages equally well, and the first of them
    # is often exotic (cp1006, cp1250); among equals, Windows-1252 is by far the most likely.
    for match in matches:
        tied = match.chaos <= best.chaos and match.coherence >= best.coherence
        if tied and "cp1252" in match.could_be_from_charset:
            try:
                return data.decode("cp1252")
            except UnicodeDecodeError:
                break
    return str(best)
