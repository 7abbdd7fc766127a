"""The storage seam: everything ingest and search need from a collection of chunks.

`ChunkStore` is the union of small protocols, one per capability: the chunks themselves
(`CoreChunks`), the collection's settings and layout, tenants, leases, entities, and what the
seed layout needs. `StoreServer` is the server-level seam (its collections, version, backups).
`WeaviateStore` (stitcher.store.weaviate) is the real thing; `MemoryStore` holds the same data in
dicts for fast unit tests. Both pass the contract in stitcher.testing (run by
tests/test_store_contract.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from stitcher.errors import FaultKind, UsageError
from stitcher.filters import Where
from stitcher.graph.model import Entity
from stitcher.graph.resolve import EntityLookup
from stitcher.models import (
    ChunkRecord,
    CollectionSettings,
    Hit,
    PendingDocument,
    ScoreExplain,
    SeedObject,
    SpanRequest,
    StoredDocument,
    TenantInfo,
    WriteFailure,
)

if TYPE_CHECKING:
    from stitcher.store.entities import EntityView

#: How a collection is laid out: stitcher's own (settings recorded), seed 003's LangChain
#: layout (`text` + `parent_id`, see stitcher.seed_layout), or anything else.
Layout = Literal["stitcher", "seed", "unknown"]

#: How `hybrid` fuses its two sides: Weaviate's relativeScoreFusion or rankedFusion.
FUSIONS = ("relative", "ranked")


def scope_of(name: str, tenant: str | None) -> str:
    """What a store bound to `name` (and `tenant`) holds, for messages: "'Docs'" or
    "tenant 'kb1' of 'Docs'"."""
    if tenant is None:
        return repr(name)
    return f"tenant {tenant!r} of {name!r}"


def check_fusion(fusion: str) -> None:
    """Raise UsageError unless `fusion` is one of FUSIONS (every store's `hybrid` does)."""
    if fusion not in FUSIONS:
        raise UsageError(f"unknown fusion {fusion!r}; use 'relative' or 'ranked'")


class EntityCollections(EntityLookup, Protocol):
    """The entities (organizations, people) loaded for one chunk collection."""

    def exists(self, kind: str = ...) -> bool:
        """Whether entities of `kind` were ever loaded."""
        ...

    def entities(self, kinds: Iterable[str] = ...) -> list[Entity]:
        """Every stored entity of `kinds`."""
        ...

    def load(self, entities: Sequence[Entity]) -> object:
        """Create or update `entities` (same kind and id replaces); returns a report."""
        ...

    def show(self, name: str, kind: str | None = None) -> EntityView:
        """The one entity `name` means, its links in both directions and, where the store
        links mentions, the documents that mention it."""
        ...


class LeaseBoard(Protocol):
    """The leases of one server's collections (stitcher.locks): one record per locked
    collection, tenant or source, by id. `create` makes a record only when none has that id, so
    of two writers racing for a free lease one wins."""

    def ensure(self) -> None:
        """Make the board ready to hold leases (on Weaviate: its bookkeeping collection)."""
        ...

    def read(self, lease_id: str) -> dict[str, Any] | None:
        """The record with this id, or None."""
        ...

    def create(self, lease_id: str, record: Mapping[str, Any]) -> bool:
        """Store `record` under `lease_id`; False, and nothing changed, when one exists."""
        ...

    def records_of(self, collection: str) -> list[dict[str, Any]]:
        """Every record whose "collection" value is `collection`."""
        ...

    def update(self, lease_id: str, changes: Mapping[str, Any]) -> None:
        """Change some values of the existing record `lease_id`."""
        ...

    def delete(self, lease_id: str) -> None:
        """Remove the record `lease_id` if there is one."""
        ...

    def fault_kind(self, error: BaseException) -> FaultKind | None:
        """What an error raised by one of the methods above was, by its type (stitcher.faults:
        whether stitcher.locks retries it); None when it is not the board's own kind of error."""
        ...


class CoreChunks(Protocol):
    """The chunks of one collection, or of one tenant of a multi-tenant collection (a knowledge
    base among many in one collection; everything below then reads and writes that tenant only):
    what ingest, search and stitching need. Methods that read by id accept any number of ids."""

    @property
    def name(self) -> str:
        """The collection's name as the server spells it."""
        ...

    @property
    def tenant(self) -> str | None:
        """The tenant the store is bound to; None for a single-tenant collection."""
        ...

    @property
    def scope(self) -> str:
        """What the store holds, for messages: "'Docs'" or "tenant 'kb1' of 'Docs'"."""
        ...

    def exists(self) -> bool:
        """Whether the collection exists (a tenant store: whether its tenant does). A tenant
        store on a single-tenant collection raises TenancyMismatch; a single-tenant store on a
        multi-tenant collection is refused when it reads the settings."""
        ...

    def drop(self, *, all_tenants: bool = False) -> bool:
        """Delete the collection and forget its registered sources; False when it did not exist.
        A tenant store deletes its tenant only; a multi-tenant collection as a whole only goes
        with `all_tenants` (else TenancyMismatch)."""
        ...

    def count(self) -> int:
        """Number of chunk objects."""
        ...

    def documents(self) -> dict[str, StoredDocument]:
        """Every document in the collection, keyed by doc_id (walks the whole collection).

        Complete or not at all: ingest's skip/replace/prune decisions rest on it. A store whose
        listing can come up short (a replica behind) raises ListingIncomplete instead. A
        document recorded by `begin_documents` and not yet by `finish_documents` has
        `complete=False`.
        """
        ...

    def begin_documents(self, documents: Sequence[PendingDocument]) -> None:
        """Record these document versions as incomplete, before any of their chunks is written."""
        ...

    def finish_documents(self, doc_ids: Sequence[str]) -> None:
        """These documents are complete again (all chunks confirmed, old version deleted) or
        gone: the last write of a document. Ids never begun are ignored."""
        ...

    def vectors_by_chunk_hash(
        self, doc_id: str, chunk_hashes: Iterable[str]
    ) -> dict[str, list[float]]:
        """Stored vectors of this document's chunks whose text hash is in `chunk_hashes`."""
        ...

    def write(
        self, records: Sequence[ChunkRecord], vectors: Sequence[list[float]]
    ) -> list[WriteFailure]:
        """Insert or replace `records` (same id replaces). Returns what the server refused."""
        ...

    def delete_document(self, doc_id: str, keep_doc_hash: str | None = None) -> int:
        """Delete the document's chunks, except those of version `keep_doc_hash`. Returns count."""
        ...

    def fetch(self, ids: Sequence[str]) -> list[ChunkRecord]:
        """The records with these ids that exist, in any order."""
        ...

    def fetch_spans(self, requests: Sequence[SpanRequest]) -> list[ChunkRecord]:
        """All chunks overlapping any requested character range, in ONE server round trip."""
        ...

    def fields(self) -> dict[str, str]:
        """Filterable fields by the name users write in --where, with their kinds
        ("text", "word", "int", "number", "bool", "date", "uuid", "text[]")."""
        ...

    def stored_values(self, field: str, limit: int = 10_000) -> list[str]:
        """Distinct values of a text field, most common first (for `source`: the source
        names); stitcher.filtervalues uses them for tags' case and filters that match nothing."""
        ...

    def heads(
        self, where: Where | None = None, *, limit: int = 100, newest_first: bool = False
    ) -> list[ChunkRecord]:
        """The first chunk of every matching document (one per version), newest `date` first
        when asked."""
        ...

    def sample(self, limit: int = 100) -> list[ChunkRecord]:
        """Up to `limit` chunks, any of them (for example values)."""
        ...

    def records_with_vectors(
        self, page_size: int = 500
    ) -> Iterator[tuple[ChunkRecord, list[float]]]:
        """Every chunk with its vector, in id order, `page_size` at a time (constant memory).

        A store that finds the walk short only after streaming raises ListingIncomplete at the
        end, so a caller must not take what it wrote as complete before the iterator is done.
        """
        ...

    def hybrid(
        self,
        text: str,
        keyword_text: str,
        vector: list[float],
        *,
        limit: int,
        alpha: float,
        fusion: str = "relative",
        where: Where | None = None,
    ) -> list[Hit]:
        """Hybrid query: BM25 over `keyword_text` (already segmented) and vector similarity."""
        ...


class SettingsAndLayout(Protocol):
    """What the collection is: its recorded settings and layout, where its sources come from, its
    replication, and the other collections on its server."""

    def create(self, settings: CollectionSettings) -> None:
        """Create the collection with stitcher's schema and record `settings` on it."""
        ...

    def settings(self) -> CollectionSettings | None:
        """The settings recorded on the collection, or None when it has none (foreign layout)."""
        ...

    def layout(self) -> Layout:
        """Which layout the collection has (CollectionMissing when it does not exist)."""
        ...

    def check_replication(self) -> None:
        """Refuse a requested replication factor before anything is written: UsageError when a
        new collection's factor exceeds the servers, SettingsMismatch when an existing
        collection has another."""
        ...

    def replication(self) -> dict[str, Any]:
        """How the collection is replicated: "replication_factor", "consistency" and "shards"
        (the nodes holding each shard), for `stitcher stats`."""
        ...

    def source_roots(self) -> dict[str, str]:
        """The folder each source of the collection was first ingested from, by source name."""
        ...

    def register_source(self, name: str, root: str) -> None:
        """Record (or move) source `name` to the folder `root`."""
        ...

    def collection_names(self) -> list[str]:
        """The names of the collections on the same server, this one's included when it exists,
        sorted; stitcher's bookkeeping collections left out (for "did you mean" messages)."""
        ...


class TenantAware(Protocol):
    """The tenants of a multi-tenant collection."""

    def collection_exists(self) -> bool:
        """Whether the collection itself exists, whatever the tenant (a tenant store's
        `exists` answers for its tenant)."""
        ...

    def is_multi_tenant(self) -> bool:
        """Whether the existing collection is multi-tenant."""
        ...

    def tenants(self, *, count: bool = True) -> list[TenantInfo]:
        """The collection's tenants by name: status, and chunks of the active ones when `count`
        (TenancyMismatch on a single-tenant collection)."""
        ...

    def set_tenant_active(self, name: str, active: bool) -> str:
        """Activate or deactivate tenant `name` of the collection; returns its status before."""
        ...


class LeaseKeeping(Protocol):
    """Where writers of the server's collections hold their leases (stitcher.locks)."""

    def leases(self) -> LeaseBoard:
        """Where writers of the collections on this store's server hold their leases."""
        ...


class EntityLinking(Protocol):
    """The entities (organizations, people) of the collection, and mentions linked to them."""

    def entities(self) -> EntityCollections:
        """The entities (organizations, people) loaded for this collection."""
        ...

    def take_unresolved_mentions(self) -> dict[str, list[str]]:
        """Names in chunks' `mentions` that no loaded organization has, by doc_id, since the
        last call ({} for a store that does not link mentions)."""
        ...


class SeedLayoutAccess(Protocol):
    """What adopt and seed search need (issue 14): markers kept on the collection, sibling
    collections, and a collection of any layout's objects as stored."""

    def sibling(self, name: str) -> ChunkStore:
        """The store of collection `name` on the same server (adopt's temporary copy)."""
        ...

    def marker(self, key: str) -> dict[str, Any]:
        """The record kept under `key` on the collection itself (on Weaviate: in its
        description, next to the settings); {} when there is none."""
        ...

    def set_marker(self, key: str, record: Mapping[str, Any]) -> None:
        """Keep `record` under `key` on the collection (the settings stay as they are)."""
        ...

    def seed_objects(
        self, properties: Sequence[str] | None = None, *, vectors: bool = True
    ) -> list[SeedObject]:
        """Every object of the collection, any layout, as it is stored: `text`, `source`,
        `parent_id` and the other properties (only `properties` when given), with its vector.

        Complete or not at all: adopt deletes the original after checking its copy against it.
        """
        ...

    def seed_hybrid(
        self, query: str, vector: list[float], *, limit: int, alpha: float, fusion: str
    ) -> list[tuple[SeedObject, float, ScoreExplain | None]]:
        """Hybrid query on a seed-layout collection's own schema: BM25 over `text` as the seed
        stored it (word tokenization) and vector similarity; best first, with the scores."""
        ...

    def seed_hop(self, parent_ids: Sequence[str], child_of: Sequence[str]) -> list[SeedObject]:
        """In ONE round trip: the objects with these ids, and the objects whose `parent_id` is
        one of `child_of` (a seed-layout collection's chain, one hop each way)."""
        ...


class ChunkStore(
    CoreChunks,
    SettingsAndLayout,
    TenantAware,
    LeaseKeeping,
    EntityLinking,
    SeedLayoutAccess,
    Protocol,
):
    """One collection of chunks on a server, with every capability above: what `Session`, ingest
    and search are typed to. A store that lacks a capability implements only its protocol."""


@dataclass(frozen=True)
class BackupOutcome:
    """How a server's backup or restore ended: its status as the server words it ("SUCCESS",
    "FAILED", ...), the server's reason when there is one, and the collections it held (None
    when the server did not say)."""

    status: str
    error: str | None = None
    collections: tuple[str, ...] | None = None


class StoreServer(Protocol):
    """One server of collections: what is about the server rather than one collection (its
    collections, its version, backups of several collections at once), and the store of each."""

    def store(self, name: str, *, tenant: str | None = None) -> ChunkStore:
        """The store of collection `name` (of its tenant `tenant`) on this server."""
        ...

    def collection_names(self) -> list[str]:
        """The server's collections, sorted, stitcher's bookkeeping ones left out."""
        ...

    def version(self) -> str:
        """The server's version ("?" when it does not say)."""
        ...

    def backup(self, backup_id: str, collections: Sequence[str]) -> BackupOutcome:
        """Back `collections` up under `backup_id` (the server's own backup), to the end."""
        ...

    def restore(self, backup_id: str, collections: Sequence[str] | None) -> BackupOutcome:
        """Restore `collections` of backup `backup_id` (None: all of them), to the end."""
        ...

    def close(self) -> None:
        """Let go of the server (its connection); the stores it opened are unusable after."""
        ...
