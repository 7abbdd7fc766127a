"""Rich Text Format (.rtf): a small reader of the text and the \\info group.

The stored text (what chunk offsets refer to) is the document body, one block per paragraph
(\\par, \\sect, \\page), separated by a blank line; \\line is a line break inside its paragraph
and \\tab a tab. A table row (\\row) is one block, its cells (\\cell) separated by tabs; the
paragraphs inside a cell are joined by a space. A list item's number or bullet (\\listtext,
\\pntext) stays at the start of its paragraph. A footnote leaves the sentence and follows its
paragraph as a block "[1] note text". Not text: font, colour, style and list tables, pictures,
objects' data, headers and footers, field instructions (a hyperlink's visible text is kept),
annotations, and every other group marked ignorable with \\*.

Characters: \\uN (with its \\ucN fallback characters skipped, surrogate pairs joined) is Unicode;
\\'hh escapes and raw 8-bit bytes are decoded with the code page of the current font's
\\fcharset or \\cpg, else the document's \\ansicpg (\\ansi 1252, \\mac, \\pc, \\pca), so that
Chinese written as GBK (\\ansicpg936 or a \\fcharset134 font) or Big5 (\\fcharset136) reads right,
double-byte characters included.

Metadata from \\info: \\title → title; \\subject → subject; \\author → author; \\keywords → tags
(split at commas); \\doccomm → description; \\creatim → date (RTF gives no time zone: UTC).
"""

from __future__ import annotations

import codecs
import datetime as dt
import re
from dataclasses import dataclass, field, replace
from typing import Any

from stitcher.errors import LoadError
from stitcher.loaders.formats import Extracted

_TOKEN = re.compile(
    rb"""\\(?P<word>[a-zA-Z]{1,32})(?P<arg>-?\d{1,10})?\x20?
      | \\'(?P<hex>[0-9a-fA-F]{2})
      | \\(?P<symbol>[^a-zA-Z'])
      | (?P<open>\{)
      | (?P<close>\})
      | (?P<text>[^\\{}\r\n]+)
      | [\r\n]+
      | \\
    """,
    re.VERBOSE,
)

# Groups that hold no text of the document.
_SKIPPED = frozenset(
    b"""colortbl stylesheet listtable listoverridetable revtbl rsidtbl pict object objdata
    header headerl headerr headerf footer footerl footerr footerf fldinst xmlnstbl filetbl
    themedata colorschememapping latentstyles datastore generator pn pntxta pntxtb annotation
    atnid atnauthor atndate atnicn template docvar nonshppict shpinst sp private mmathPr
    pgdsctbl listpicture defchp defpap bkmkstart bkmkend txfieldtext""".split()
)
_INFO_FIELDS = {b"title": "title", b"subject": "subject", b"author": "author"}
_INFO_FIELDS.update({b"keywords": "tags", b"doccomm": "description"})
_SYMBOLS = {
    b"emdash": "\u2014",
    b"endash": "\u2013",
    b"bullet": "\u2022",
    b"lquote": "\u2018",
    b"rquote": "\u2019",
    b"ldblquote": "\u201c",
    b"rdblquote": "\u201d",
    b"emspace": " ",
    b"enspace": " ",
    b"qmspace": " ",
    b"line": "\n",
    b"tab": "\t",
}
_CONTROL_SYMBOLS = {b"~": " ", b"_": "-", b"-": "", b"{": "{", b"}": "}", b"\\": "\\"}
# \fcharsetN → code page. 0 (ANSI) and 1 (default) mean the document's \ansicpg.
_CHARSET_CODEPAGES = {
    2: 1252,  # Symbol: no code page fits; its bullets decode to "·"
    77: 10000,
    128: 932,
    129: 949,
    130: 1361,
    134: 936,
    136: 950,
    161: 1253,
    162: 1254,
    163: 1258,
    177: 1255,
    178: 1256,
    186: 1257,
    204: 1251,
    222: 874,
    238: 1250,
    255: 437,
}
# GB18030 is the superset of GBK (cp936) and GB2312 that decoders should use.
_CODECS = {936: "gb18030", 10000: "mac_roman", 1361: "johab"}
# Destinations that some writers mark ignorable (pandoc: {\*\footnote ...}) and that hold text.
_KNOWN_DESTINATIONS = frozenset({b"footnote"})
_NO_TEXT = frozenset({"skip", "fonttbl", "info", "info:creatim"})
_MAX_UC = 10  # \ucN skips N fallback characters; a larger N is a corrupt file
# A list item written as its marker, a tab and the text (pandoc: "\bullet\tab item"): the tab
# only aligns the text, it separates no columns.
_MARKER_TAB = re.compile(r"^(\s*(?:[•◦▪·–—*-]|\d{1,3}[.)]|[A-Za-z][.)]|[ivxIVX]{1,5}[.)]))\t")


def read_rtf(data: bytes, source: str) -> Extracted:
    """An .rtf file: paragraphs, table rows and footnotes as blocks (see the module docstring).

    Raises:
        LoadError: The file does not start with "{\\rtf".
    """
    if not data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf"):
        raise LoadError(f"{source}: not an RTF file (it does not start with {{\\rtf)")
    parser = _Parser()
    parser.feed(data)
    return Extracted("\n\n".join(parser.blocks), parser.metadata())


@dataclass(frozen=True)
class _Group:
    """What a group inherits from its parent and may change for itself."""

    destination: str = "body"  # body, skip, fonttbl, info, info:<field>, footnote, marker
    font: int | None = None
    uc: int = 1
    in_table: bool = False


@dataclass
class _Font:
    number: int | None = None
    codepage: int | None = None


@dataclass
class _Parser:
    blocks: list[str] = field(default_factory=list)
    codepage: int = 1252
    default_font: int | None = None
    fonts: dict[int, int] = field(default_factory=dict)  # font number → code page
    info: dict[str, str] = field(default_factory=dict)
    created: dict[bytes, int] = field(default_factory=dict)
    # current output
    _text: list[str] = field(default_factory=list)
    _bytes: bytearray = field(default_factory=bytearray)
    _bytes_codepage: int = 1252
    _bytes_destination: str = "body"
    _info_parts: dict[str, list[str]] = field(default_factory=dict)
    _high_surrogate: str = ""
    _cells: list[str] = field(default_factory=list)
    _notes: list[str] = field(default_factory=list)
    _note_text: list[str] = field(default_factory=list)
    _font: _Font = field(default_factory=_Font)

    def feed(self, data: bytes) -> None:
        stack: list[_Group] = []
        group = _Group()
        first_in_group = False
        ignorable = False  # after \*: a destination to skip unless this reader knows it
        skip_chars = 0  # \uN fallback characters still to skip
        position = 0
        size = len(data)
        while position < size:
            match = _TOKEN.match(data, position)
            if match is None:  # cannot happen: the last alternative matches one backslash
                break
            position = match.end()
            kind = match.lastgroup
            if kind == "arg":  # a control word with a parameter: its last group is the number
                kind = "word"
            if kind == "open":
                stack.append(group)
                first_in_group = True
                skip_chars = 0
                continue
            if kind == "close":
                self._end_group(group, stack[-1] if stack else _Group())
                if not stack:
                    break  # the document's closing brace: whatever follows is not RTF
                group = stack.pop()
                skip_chars = 0
                continue
            starts_group, first_in_group = first_in_group, False
            if kind != "word":
                ignorable = False
            if kind == "word":
                word = match.group("word")
                arg_text = match.group("arg")
                arg = int(arg_text) if arg_text is not None else None
                if word == b"bin" and arg:
                    position += max(arg, 0)  # binary data, not text
                    continue
                if word == b"u" and arg is not None:
                    if group.destination != "skip":
                        self._unicode(arg, group)
                    skip_chars = group.uc
                    continue
                if ignorable and word not in _KNOWN_DESTINATIONS:
                    group = replace(group, destination="skip")
                else:
                    group = self._control(word, arg, group, starts_group)
                ignorable = False
                continue
            if kind == "symbol" and match.group("symbol") == b"*":
                ignorable = True
                continue
            # A character: text, a \'hh byte, or a control symbol.
            if skip_chars:
                if kind == "text":
                    chunk = match.group("text")
                    dropped = min(skip_chars, len(chunk))
                    skip_chars -= dropped
                    if chunk[dropped:]:
                        self._bytes_out(chunk[dropped:], group)
                else:
                    skip_chars -= 1
                continue
            if kind == "text":
                self._bytes_out(match.group("text"), group)
            elif kind == "hex":
                self._bytes_out(bytes([int(match.group("hex"), 16)]), group)
            elif kind == "symbol":
                symbol = match.group("symbol")
                if symbol in (b"{", b"}", b"\\"):
                    self._bytes_out(symbol, group)
                elif symbol in _CONTROL_SYMBOLS:
                    self._out(_CONTROL_SYMBOLS[symbol], group)
        self._end_paragraph()
        if self._cells:
            self._end_row()

    # -- control words -----------------------------------------------------------------------

    def _control(self, word: bytes, arg: int | None, group: _Group, starts: bool) -> _Group:
        destination = group.destination
        if destination == "skip":
            return group
        if starts and word in _SKIPPED:
            return replace(group, destination="skip")
        if word == b"fonttbl":
            return replace(group, destination="fonttbl")
        if destination == "fonttbl":
            return self._font_control(word, arg, group)
        if word == b"info":
            return replace(group, destination="info")
        if destination.startswith("info"):
            return self._info_control(word, arg, group, starts)
        if word == b"footnote":
            return replace(group, destination="footnote")
        if word in (b"listtext", b"pntext"):
            return replace(group, destination="marker")
        if word == b"ansicpg" and arg:
            self.codepage = arg
        elif word in (b"ansi", b"mac", b"pc", b"pca"):
            self.codepage = {b"ansi": 1252, b"mac": 10000, b"pc": 437, b"pca": 850}[word]
        elif word == b"deff" and arg is not None:
            self.default_font = arg
        elif word == b"f" and arg is not None:
            return replace(group, font=arg)
        elif word == b"plain":
            return replace(group, font=self.default_font)
        elif word == b"uc" and arg is not None:
            return replace(group, uc=min(max(arg, 0), _MAX_UC))
        elif word == b"intbl":
            return replace(group, in_table=True)
        elif word == b"pard":
            return replace(group, in_table=False)
        elif word in (b"par", b"sect", b"page"):
            if destination == "body" and group.in_table:
                self._out(" ", group)
            elif destination == "body":
                self._end_paragraph()
            else:
                self._out(" ", group)
        elif word in (b"cell", b"nestcell"):
            self._end_cell()
        elif word in (b"row", b"nestrow"):
            self._end_row()
        elif word == b"tab" and destination == "marker":
            self._out(" ", group)
        elif word in _SYMBOLS:
            self._out(_SYMBOLS[word], group)
        elif word == b"chftn" and destination == "footnote":
            self._out(f"[{len(self._notes) + 1}] ", group)
        return group

    def _font_control(self, word: bytes, arg: int | None, group: _Group) -> _Group:
        if word == b"f" and arg is not None:
            self._font = _Font(arg)
        elif word == b"fcharset" and arg is not None and self._font.number is not None:
            codepage = _CHARSET_CODEPAGES.get(arg)
            if codepage is not None:
                self.fonts.setdefault(self._font.number, codepage)
        elif word == b"cpg" and arg and self._font.number is not None:
            self.fonts[self._font.number] = arg
        return group

    def _info_control(self, word: bytes, arg: int | None, group: _Group, starts: bool) -> _Group:
        if word in _INFO_FIELDS:
            return replace(group, destination="info:" + _INFO_FIELDS[word])
        if word == b"creatim":
            return replace(group, destination="info:creatim")
        if group.destination == "info:creatim" and arg is not None:
            self.created[word] = arg
        elif starts:
            return replace(group, destination="skip")  # {\revtim ...}, {\operator ...}, ...
        return group

    # -- characters ----------------------------------------------------------------------------

    def _codepage_for(self, group: _Group) -> int:
        font = group.font if group.font is not None else self.default_font
        return self.fonts.get(font, self.codepage) if font is not None else self.codepage

    def _bytes_out(self, raw: bytes, group: _Group) -> None:
        """Bytes of text, decoded together so that a double-byte character split over two
        \\'hh escapes comes out whole."""
        if group.destination in _NO_TEXT:
            return
        codepage = self._codepage_for(group)
        if self._bytes and (
            codepage != self._bytes_codepage or group.destination != self._bytes_destination
        ):
            self._flush_bytes()
        self._bytes_codepage = codepage
        self._bytes_destination = group.destination
        self._bytes += raw

    def _unicode(self, value: int, group: _Group) -> None:
        if value < 0:
            value += 0x10000
        char = chr(value) if 0 <= value <= 0xFFFF else "\ufffd"
        if 0xD800 <= value < 0xDC00:
            self._high_surrogate = char
            return
        if 0xDC00 <= value < 0xE000 and self._high_surrogate:
            pair = (self._high_surrogate + char).encode("utf-16-le", "surrogatepass")
            char = pair.decode("utf-16-le", "replace")
        self._high_surrogate = ""
        self._out(char, group)

    def _out(self, text: str, group: _Group) -> None:
        if group.destination in _NO_TEXT:
            return
        self._flush_bytes()
        self._target(group.destination).append(text)

    def _target(self, destination: str) -> list[str]:
        if destination == "footnote":
            return self._note_text
        if destination.startswith("info:"):
            return self._info_parts.setdefault(destination[5:], [])
        return self._text

    def _flush_bytes(self) -> None:
        if not self._bytes:
            return
        encoding = _CODECS.get(self._bytes_codepage, f"cp{self._bytes_codepage}")
        try:
            codecs.lookup(encoding)
        except LookupError:
            encoding = "cp1252"
        text = bytes(self._bytes).decode(encoding, "replace")
        self._bytes.clear()
        self._target(self._bytes_destination).append(text)

    # -- structure -------------------------------------------------------------------------------

    def _end_group(self, group: _Group, parent: _Group) -> None:
        self._flush_bytes()
        if group.destination == "footnote" and parent.destination != "footnote":
            note = " ".join("".join(self._note_text).split())
            self._note_text.clear()
            if note:
                self._notes.append(note)

    def _take_text(self) -> str:
        self._flush_bytes()
        text = "".join(self._text)
        self._text.clear()
        return text

    def _end_paragraph(self) -> None:
        text = "\n".join(line.rstrip() for line in self._take_text().split("\n")).strip("\n")
        text = _MARKER_TAB.sub(r"\1 ", text)
        if text.strip():
            self.blocks.append(text)
        self.blocks.extend(self._notes)
        self._notes.clear()

    def _end_cell(self) -> None:
        self._cells.append(" ".join(self._take_text().split()))

    def _end_row(self) -> None:
        self._end_cell_if_open()
        cells = self._cells[:]
        self._cells.clear()
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            self.blocks.append("\t".join(cells))
        self.blocks.extend(self._notes)
        self._notes.clear()

    def _end_cell_if_open(self) -> None:
        if "".join(self._text).strip() or self._bytes:
            self._end_cell()
        else:
            self._text.clear()

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        for key, pieces in self._info_parts.items():
            value = " ".join("".join(pieces).split())
            if value:
                meta[key] = value
        date = _created(self.created)
        if date is not None:
            meta["date"] = date
        return meta


def _created(fields: dict[bytes, int]) -> dt.datetime | None:
    try:
        return dt.datetime(
            fields[b"yr"],
            fields.get(b"mo", 1),
            fields.get(b"dy", 1),
            fields.get(b"hr", 0),
            fields.get(b"min", 0),
            fields.get(b"sec", 0),
            tzinfo=dt.timezone.utc,
        )
    except (KeyError, ValueError, OverflowError):
        return None
