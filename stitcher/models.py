"""Plain data records shared by every layer. No I/O, no heavy imports."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from stitcher import rules

#: Characters hashed at a time by Document.doc_hash.
_HASH_SLICE = 1 << 20


def sha256_hex(text: str) -> str:
    """Hex SHA-256 of the UTF-8 encoding of `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Document:
    """One input document after loading: normalised text plus metadata.

    `doc_id` is stable across runs (the path relative to the ingest root); `source` is the path
    as the user gave it. `metadata` holds title, date, tags, lang, page starts and any front-matter
    keys; values are JSON-like (str, int, float, bool, list[str], datetime).
    """

    doc_id: str
    source: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    #: Metadata keys taken from the file system rather than the content (a `date` that is the
    #: file's mtime): left out of the version hash, so touching or re-cloning a file is no change.
    volatile: frozenset[str] = frozenset()

    @property
    def doc_hash(self) -> str:
        """Hash of text and metadata (except `volatile` keys) and of the text rules in force
        (stitcher.rules): a change of any of them makes a new version."""
        meta = repr(
            sorted((k, repr(v)) for k, v in self.metadata.items() if k not in self.volatile)
        )
        # sha256_hex(rules + "\x00" + text + "\x00" + meta), fed a slice at a time: for a
        # 200 MB text neither the concatenation nor the whole UTF-8 encoding is ever in memory.
        digest = hashlib.sha256((rules.TEXT_RULES_VERSION + "\x00").encode("utf-8"))
        for begin in range(0, len(self.text), _HASH_SLICE):
            digest.update(self.text[begin : begin + _HASH_SLICE].encode("utf-8"))
        digest.update(("\x00" + meta).encode("utf-8"))
        return digest.hexdigest()


@dataclass(frozen=True)
class Chunk:
    """A piece of a document: `text == document.text[start:end]`."""

    index: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class ChunkContext:
    """The document text around a chunk, stored with it so search can stitch without asking
    for the neighbours: `before` ends at the chunk's start, `after` starts at its end, and
    `neighbours` are the (index, start, end) of the other chunks that this text touches."""

    before: str
    after: str
    neighbours: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk as stored in a collection (one Weaviate object).

    `doc_length` is the length of the whole document text, so `end == doc_length` marks its last
    chunk. `metadata` holds the document's metadata (title, date, tags, lang, page, ...).
    `starts_sentence` / `ends_sentence` say whether the chunk's text (whitespace aside) already
    begins / ends on a sentence boundary of the whole document — decided at ingest, where the
    whole text is at hand, so search can skip stitching on that side (None: not known).
    """

    id: str
    doc_id: str
    doc_hash: str
    chunk_index: int
    start: int
    end: int
    text: str
    source: str
    chunk_hash: str
    doc_length: int = 0
    parent_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    starts_sentence: bool | None = None
    ends_sentence: bool | None = None
    context: ChunkContext | None = None
    #: stitcher.rules.TEXT_RULES_VERSION the chunk was made with (None: before rules were stored).
    rules: str | None = None


@dataclass(frozen=True)
class SpanRequest:
    """Ask for every chunk of one document version overlapping characters [lo, hi)."""

    doc_id: str
    doc_hash: str
    lo: int
    hi: int


@dataclass(frozen=True)
class ScoreExplain:
    """How a hybrid score came about: each side's normalised score and its weight."""

    alpha: float
    fusion: str
    keyword: float | None
    vector: float | None
    keyword_contribution: float | None
    vector_contribution: float | None
    raw: str = ""
    #: Why stitcher ranked the hit below the others ("" when it did not), e.g.
    #: stitcher.fusion.DEMOTED_LISTING; its score then is the fused score scaled down.
    demoted: str = ""


@dataclass(frozen=True)
class Hit:
    """A chunk returned by a query, with its fused score."""

    record: ChunkRecord
    score: float
    explain: ScoreExplain | None = None


@dataclass(frozen=True)
class Passage:
    """A search result: an exact slice `[start, end)` of one document, whole sentences if possible.

    `truncated` is true when a sentence boundary was not reached within the extension bound on
    either side. `hit_ids` are the chunks that matched the query; `chunk_ids` all chunks the
    passage was cut from, in document order.
    """

    text: str
    source: str
    doc_id: str
    score: float
    hit_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    start: int
    end: int
    truncated: bool
    explain: ScoreExplain | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    hit_spans: tuple[tuple[int, int], ...] = ()


#: The vector indexes a collection can be made with: Weaviate's approximate HNSW graph (its
#: default) or an exact, flat one. Which one a model needs is the embed layer's to say
#: (stitcher.embed.models.ModelRef.vector_index).
VECTOR_INDEX_HNSW = "hnsw"
VECTOR_INDEX_FLAT = "flat"

#: How a collection holds its vectors. "single": one unnamed vector per chunk (every model, and
#: by-script collections made before named vectors). "by-script": one named vector per part of a
#: by-script model, each with its own index; a chunk carries only its part's vector and a query
#: targets the vector of its script's part (stitcher.store.vectors). Chosen by the embed layer
#: (stitcher.embed.models.ModelRef.vectors) when a collection is created, read from its settings
#: afterwards.
VECTORS_SINGLE = "single"
VECTORS_BY_SCRIPT = "by-script"


@dataclass(frozen=True)
class CollectionSettings:
    """What a collection was built with; writing with other settings is refused."""

    model: str
    dimension: int
    chunk_size: int
    chunk_overlap: int
    segmenter: str = "rjieba"
    layout: str = "stitcher/1"
    #: Copies of each shard the server keeps (Weaviate cannot change it on a collection later);
    #: collections recorded before it existed read back as 1.
    replication_factor: int = 1
    #: One collection for many knowledge bases, a Weaviate tenant each (stitcher --tenant);
    #: fixed when the collection is created. Not compared: it is the collection's layout,
    #: checked on its own (TenancyMismatch), not something its chunks were made with.
    multi_tenant: bool = field(default=False, compare=False)
    #: The vector index the collection was made with (VECTOR_INDEX_HNSW or _FLAT); collections
    #: recorded before it existed have HNSW and read back so. Not compared, like multi_tenant:
    #: the vectors are the same in either index, so writing into it is never refused for it.
    vector_index: str = field(default=VECTOR_INDEX_HNSW, compare=False)
    #: How the vectors are held (VECTORS_SINGLE or VECTORS_BY_SCRIPT); collections recorded
    #: before it existed have one vector and read back so. Not compared: a chunk's vector is the
    #: same in either layout (its text picks the part that embeds it), so an ingest or import
    #: into a collection of the other layout writes what that collection holds.
    vectors: str = field(default=VECTORS_SINGLE, compare=False)

    def recorded(self) -> dict[str, Any]:
        """The values as stored (collection description, export header); `multi_tenant`,
        `vector_index` and `vectors` only when not their defaults, so a collection of none of
        them records exactly what it did before they existed."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        if not self.multi_tenant:
            del values["multi_tenant"]
        if self.vector_index == VECTOR_INDEX_HNSW:
            del values["vector_index"]
        if self.vectors == VECTORS_SINGLE:
            del values["vectors"]
        return values

    def differences(self, other: CollectionSettings) -> list[str]:
        """Human-readable list of fields that differ, e.g. ["model: a != b"]."""
        out = []
        for name in ("model", "dimension", "chunk_size", "chunk_overlap", "segmenter", "layout"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                out.append(f"{name}: {theirs!r} (collection) != {mine!r} (requested)")
        return out

    def refusals(self, *, model: str, chunk_size: int, chunk_overlap: int) -> list[str]:
        """Why writing with this model and chunking into a collection built with these settings
        is refused (empty: it is allowed). Ingest refuses on it and `doctor` warns on it, so both
        always agree; dimension, segmenter and layout are the collection's own, not asked for.
        """
        wanted = replace(self, model=model, chunk_size=chunk_size, chunk_overlap=chunk_overlap)
        return wanted.differences(self)


@dataclass(frozen=True)
class TenantInfo:
    """One tenant (knowledge base) of a multi-tenant collection."""

    name: str
    #: Weaviate's activity status: "ACTIVE", "INACTIVE", "OFFLOADED", ...
    status: str
    #: Chunks it holds; None when not counted (counting an inactive tenant would wake it).
    chunks: int | None = None


@dataclass(frozen=True)
class StoredDocument:
    """What the store knows about one document: enough to decide skip / replace / prune."""

    doc_id: str
    doc_hashes: frozenset[str]
    chunk_count: int
    source: str
    #: Text rules versions of its chunks ("" for chunks stored without one).
    rules: frozenset[str] = frozenset()
    #: False while a version of it is being written, or was left half written by a run that
    #: stopped (see ChunkStore.begin_documents); its chunks are then not all there.
    complete: bool = True


@dataclass(frozen=True)
class PendingDocument:
    """A document version about to be written: recorded as incomplete until it is stored."""

    doc_id: str
    doc_hash: str
    chunk_count: int


@dataclass(frozen=True)
class WriteFailure:
    """A chunk the store did not accept, with the server's reason."""

    id: str
    doc_id: str
    reason: str


@dataclass(frozen=True)
class SeedObject:
    """One object of a seed-layout collection.

    `extra` holds the other properties LangChain stored from the document's metadata (e.g.
    `page` from a PDF loader); `vector` is filled only when it was read (adopt).
    """

    id: str
    text: str
    source: str
    parent_id: str | None
    extra: Mapping[str, Any] = field(default_factory=dict)
    vector: list[float] | None = None
