"""A loaded document made ready to write: the names a mentions file gives it merged in, and its
chunks kept as offsets until the pipeline builds records from them."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import overload

from stitcher.chunking import split_spans
from stitcher.graph.model import mentions_for
from stitcher.models import Chunk, Document


class Chunks(Sequence[Chunk]):
    """A document's chunks kept as offsets (16 bytes each, not a Chunk and its text apiece);
    a Chunk is made when asked for. The text of a 200 MB document is ~1M chunks."""

    def __init__(self, text: str, starts: array[int], ends: array[int]) -> None:
        self._text = text
        self._starts = starts
        self._ends = ends

    @classmethod
    def split(cls, text: str, chunk_size: int, chunk_overlap: int) -> Chunks:
        starts: array[int] = array("q")
        ends: array[int] = array("q")
        for start, end in split_spans(text, chunk_size, chunk_overlap):
            starts.append(start)
            ends.append(end)
        return cls(text, starts, ends)

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> Chunk: ...

    @overload
    def __getitem__(self, index: slice) -> list[Chunk]: ...

    def __getitem__(self, index: int | slice) -> Chunk | list[Chunk]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        start, end = self._starts[index], self._ends[index]
        return Chunk(index, start, end, self._text[start:end])


def with_mentions(doc: Document, mapping: Mapping[str, Sequence[str]]) -> Document:
    """The document with the names `mapping` gives it added to its `mentions`."""
    extra = mentions_for(doc.doc_id, doc.source, mapping)
    if not extra:
        return doc
    own = doc.metadata.get("mentions") or []
    own = [own] if isinstance(own, str) else list(own)
    merged = list(dict.fromkeys([*own, *extra]))
    return replace(doc, metadata={**doc.metadata, "mentions": merged})
