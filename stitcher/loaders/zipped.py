"""Reading zip containers (EPUB, OpenDocument) and the XML inside them without trusting either.

A container is opened from bytes already in memory. Members are read only up to a cap on their
uncompressed size, checked against the size the archive declares before anything is
decompressed (zipfile never returns more than the declared size, so a member lying about its size
fails its CRC check instead of inflating), and the members one document reads together have a
budget: a zip bomb costs a LoadError, not the machine's memory. XML is parsed with defusedxml,
which refuses entity declarations (billion laughs, quadratic blow-up) and external entities and
DTDs that would be fetched.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from collections.abc import Callable
from typing import TYPE_CHECKING

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import ParseError, fromstring

from stitcher.errors import LoadError
from stitcher.loaders.metadata import parse_date

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

#: Uncompressed bytes one document may read from its container, all members together. The
#: largest real books are a few tens of MB of XHTML; images and fonts are never read.
MAX_UNPACKED_BYTES = 256 << 20
#: Members in one archive: a real book has hundreds, an OpenDocument file dozens.
MAX_MEMBERS = 50_000


class Container:
    """An open zip archive and what has been read from it so far (for the size budget)."""

    def __init__(self, data: bytes, source: str, kind: str) -> None:
        """Open `data` as a zip archive.

        Args:
            data: The file's bytes.
            source: The path shown in error messages.
            kind: What the file should be, for messages ("EPUB", "OpenDocument text").

        Raises:
            LoadError: Not a zip archive, or one with absurdly many members.
        """
        self.source = source
        self.kind = kind
        self._unpacked = 0
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise self.error(f"not a zip archive ({exc})") from None
        if len(infos) > MAX_MEMBERS:
            raise self.error(f"{len(infos)} members in the archive; at most {MAX_MEMBERS} are read")
        self._members = {info.filename: info for info in infos}

    def error(self, problem: str) -> LoadError:
        """A LoadError naming the file and what it should have been."""
        return LoadError(f"{self.source}: not a readable {self.kind} file: {problem}")

    def names(self) -> list[str]:
        """Member names, in archive order."""
        return list(self._members)

    def has(self, name: str) -> bool:
        return name in self._members

    def read(self, name: str) -> bytes:
        """One member's bytes, counted against the document's budget.

        Raises:
            LoadError: The member is missing, encrypted, corrupt, or over the budget.
        """
        info = self._members.get(name)
        if info is None:
            raise self.error(f"{name!r} is missing from the archive")
        left = MAX_UNPACKED_BYTES - self._unpacked
        if info.file_size > left:
            raise self.error(
                f"{name!r} unpacks to {info.file_size:,} bytes, over the limit of "
                f"{MAX_UNPACKED_BYTES:,} bytes per document (a zip bomb?)"
            )
        try:
            with self._zip.open(info) as member:
                data = member.read(left + 1)
        except RuntimeError as exc:  # zipfile's way of saying "encrypted, no password"
            raise self.error(f"{name!r} is encrypted ({exc})") from None
        except Exception as exc:
            # A damaged member fails in zipfile, zlib, lzma or bz2, each its own way: one bad file.
            raise self.error(f"{name!r} is corrupt ({type(exc).__name__}: {exc})") from None
        self._unpacked += len(data)
        if self._unpacked > MAX_UNPACKED_BYTES:
            raise self.error(f"over the limit of {MAX_UNPACKED_BYTES:,} unpacked bytes")
        return data

    def xml(self, name: str) -> Element:
        """One member parsed as XML (see `parse_xml`)."""
        return parse_xml(self.read(name), name, self.error)


def parse_xml(data: bytes, name: str, error: Callable[[str], LoadError]) -> Element:
    """XML bytes → the root element, refusing entity declarations and external references.

    Args:
        data: The XML document.
        name: What it is (a member's name), for the message.
        error: Turns a problem into the LoadError to raise (e.g. `Container.error`).
    """
    try:
        root: Element = fromstring(data)
    except DefusedXmlException as exc:
        raise error(f"{name!r} declares XML entities, which are refused ({exc})") from None
    except (ParseError, ValueError) as exc:
        raise error(f"{name!r} is not well-formed XML ({exc})") from None
    return root


_FRACTION = re.compile(r"(\.\d{6})\d+")
_YEAR_MONTH = re.compile(r"^(\d{4})(?:-(\d{2}))?$")


def loose_date(value: str | None) -> dt.datetime | None:
    """A date from metadata that may give only a year or a year and month ("2010", "2010-05").

    Nanosecond fractions (LibreOffice writes nine digits) are cut to microseconds, which Python
    3.10's fromisoformat needs. Naive values are UTC (see `parse_date`).
    """
    if not value:
        return None
    text = _FRACTION.sub(r"\1", value.strip())
    partial = _YEAR_MONTH.match(text)
    if partial:
        year, month = int(partial.group(1)), int(partial.group(2) or 1)
        if 1 <= month <= 12:
            return dt.datetime(year, month, 1, tzinfo=dt.timezone.utc)
        return None
    return parse_date(text)


def local_name(tag: str) -> str:
    """ "{urn:oasis:...:text:1.0}p" → "p"."""
    return tag.rsplit("}", 1)[-1]
