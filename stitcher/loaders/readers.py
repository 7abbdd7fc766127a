"""Every format reader, by file extension: those of `stitcher.loaders.formats` and those that
live in modules of their own.

The readers in their own modules use `formats` (its `Extracted`, its HTML reader), so the table
that names them all sits above both.
"""

from __future__ import annotations

from collections.abc import Callable

from stitcher.loaders.epub import read_epub
from stitcher.loaders.formats import READERS as FORMATS_READERS
from stitcher.loaders.formats import Extracted
from stitcher.loaders.mail import read_eml, read_mbox
from stitcher.loaders.odt import read_odt
from stitcher.loaders.rtf import read_rtf

#: Reader by lowercase extension (with the dot): bytes and the path for messages → Extracted.
READERS: dict[str, Callable[[bytes, str], Extracted]] = {
    **FORMATS_READERS,
    # containers and correspondence: each module says what its text is
    ".epub": read_epub,
    ".odt": read_odt,
    ".rtf": read_rtf,
    ".eml": read_eml,
    ".mbox": read_mbox,
}
