"""Files compressed whole with gzip, bzip2 or xz ("changelog.Debian.gz", "bash.1.gz",
"notes.md.xz"): read by the reader of the name without the compression suffix.

Debian's /usr/share/doc compresses most of what it ships. The document id and source stay the
real file name; the text, its offsets and its line numbers are those of the decompressed file.
A file that decompresses to more than `MAX_DECOMPRESSED_BYTES` is not read: a few kilobytes of
gzip can expand to gigabytes (a decompression bomb), and no document is that long.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from stitcher.errors import LoadError

#: Compression suffix (lowercase, with the dot) → what the format is called in messages.
COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}

#: Decompressed files larger than this are not read (64 MiB: a long manual is a few MiB).
MAX_DECOMPRESSED_BYTES = 64 * 2**20

#: Why a compressed file found under a directory was not read (`SkippedFile.reason`).
TOO_LARGE = f"decompresses to more than {MAX_DECOMPRESSED_BYTES // 2**20} MiB"

_BLOCK = 2**20
# What the three decompressors raise on a damaged or truncated stream.
_DAMAGED = (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError)


def compression_of(name: str) -> str:
    """The compression suffix of a file name (".gz"), or "" if it has none."""
    _, dot, ext = name.rpartition(".")
    suffix = "." + ext.lower()
    return suffix if dot and _ and suffix in COMPRESSIONS else ""


def _open(raw: IO[bytes], suffix: str) -> io.BufferedIOBase:
    if suffix == ".gz":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if suffix == ".bz2":
        return bz2.BZ2File(raw, mode="rb")
    return lzma.LZMAFile(raw, mode="rb")


def decompress(
    data: bytes, suffix: str, source: str, *, limit: int = MAX_DECOMPRESSED_BYTES
) -> bytes:
    """The content of a compressed file.

    Raises:
        LoadError: The data is not a complete stream of that compression, or it expands to more
            than `limit` bytes.
    """
    try:
        with _open(io.BytesIO(data), suffix) as stream:
            content = stream.read(limit + 1)
    except _DAMAGED as exc:
        raise LoadError(
            f"{source}: not a readable {COMPRESSIONS[suffix]} file ({exc or type(exc).__name__})"
        ) from None
    if len(content) > limit:
        raise LoadError(f"{source}: {TOO_LARGE}; not loaded (a guard against decompression bombs)")
    return content


@dataclass(frozen=True)
class Peek:
    """What decompressing a file at discovery found.

    Attributes:
        head: Its first `head_bytes` decompressed bytes; None if the file is damaged or cannot
            be opened (the loader names it unreadable).
        too_large: It decompresses to more than the limit.
        whole: `head` is the whole decompressed content.
    """

    head: bytes | None
    too_large: bool = False
    whole: bool = True


def peek(path: Path, suffix: str, head_bytes: int, *, limit: int = MAX_DECOMPRESSED_BYTES) -> Peek:
    """Decompress the file at `path` block by block, keeping only its first `head_bytes`, to
    learn its size without holding it."""
    try:
        with open(path, "rb") as raw, _open(raw, suffix) as stream:
            head = stream.read(head_bytes)
            size = len(head)
            while size <= limit:
                block = stream.read(_BLOCK)
                if not block:
                    return Peek(head, whole=size == len(head))
                size += len(block)
            return Peek(head, too_large=True, whole=False)
    except _DAMAGED:  # damaged, or it cannot be opened: the loader says which
        return Peek(None)
