"""ChunkStore on a Weaviate collection (weaviate-client v4, gRPC for data, REST for schema).

Layout (see stitcher.store.schema): explicit properties, never auto-schema; one named vector
"default" with self-provided vectors (LangChain's WeaviateVectorStore(text_key="text") reads and
searches the collection as is); the CollectionSettings as JSON in the collection description.
BM25 runs on `text_seg`, the client-side segmented keyword text, so Chinese words match inside
compounds on any server.

Beside it: stitcher.store.weaviate.schema (the properties and the bookkeeping collections),
wscores (fusion and explain_score), wseed (the seed's layout), wleases (writer leases),
wlisting (what documents a collection holds) and wfilters (the `--where` tree as the
client's Filter).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import random
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from stitcher.bookkeeping import BOOKKEEPING_COLLECTIONS, SOURCES_COLLECTION
from stitcher.errors import (
    CollectionMissing,
    ListingIncomplete,
    SettingsMismatch,
    StitcherError,
    TenancyMismatch,
    TenantMissing,
    UsageError,
    WriteFailed,
    setting,
)
from stitcher.faults import classify, is_transient, past_a_dead_replica, server_fault
from stitcher.filters import Where
from stitcher.graph.paths import MENTIONS, MENTIONS_REF
from stitcher.ids import checked_tenant_name
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
from stitcher.retry import RetryPolicy, call_with_retries
from stitcher.store.base import Layout, scope_of
from stitcher.store.entities import EntityStore, MentionLinker
from stitcher.store.schema import (
    CORE_PROPERTIES,
    SOURCE_FIELD,
    ExtraProperty,
    MetadataConflict,
    extra_from_description,
    no_tenants,
    plan_properties,
    properties_to_record,
    record_to_properties,
    resolve_field,
    settings_from_description,
    settings_to_description,
    some_names,
    source_name,
    tenancy_mismatch,
    user_fields,
)
from stitcher.store.weaviate.filters import translate
from stitcher.store.weaviate.leases import WeaviateLeases
from stitcher.store.weaviate.listing import (
    between_counts,
    documents_by_aggregate,
    documents_by_walk,
)
from stitcher.store.weaviate.pending import WeaviatePending
from stitcher.store.weaviate.schema import (
    DEFAULT_CLUSTER_REPLICATION,
    MAX_RESULTS,
    bookkeeping_uuid,
    core_properties,
    ensure_bookkeeping_collection,
    ensure_text_property,
    extra_property,
    has_property,
    kind_of_property,
    vector_index_for,
)
from stitcher.store.weaviate.scores import parse_explain, weaviate_fusion
from stitcher.store.weaviate.seed import (
    MAX_HOP_FETCH,
    SEED_PARENT,
    SEED_TEXT,
    default_vector,
    detect_layout,
    to_seed_object,
)

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate
    from weaviate.collections import Collection

_IDS_PER_QUERY = 500
_HASHES_PER_QUERY = 500

#: How many replicas must answer a read or acknowledge a write (`--consistency`).
CONSISTENCY_LEVELS = ("one", "quorum", "all")
DEFAULT_CONSISTENCY = "quorum"
#: Seconds a whole-collection listing waits for the replica answering it to catch up. Weaviate
#: 1.38 serves a listing (cursor, filtered fetch, group-by aggregate) from ONE replica per shard,
#: the coordinator's own if it has one, whatever the consistency level; async replication
#: repairs a replica that is behind with a hashbeat every 30 s, propagating objects once they
#: are 30 s old, so about a minute, two on a loaded machine.
DEFAULT_LISTING_PATIENCE = 120.0
_LISTING_DELAYS = (1.0, 2.0, 4.0, 8.0, 15.0)

T = TypeVar("T")


class WeaviateStore:
    """One Weaviate collection of chunks, or one tenant of a multi-tenant collection.

    Args:
        client: A connected `weaviate.WeaviateClient`.
        collection_name: The collection; Weaviate upper-cases its first letter.
        batch_size: Objects per batch request, at most. Ingest writes a group of 256 chunks
            at a time (8 embedding batches of 32), so the default sends each group as one
            request: fewer requests were faster in bench/scale.py (BENCHMARKS.md, issue 13).
            Not more: a request of 500 objects of 768 dimensions and their texts is ~3 MB, under
            the 4 MB a default gRPC server accepts.
        retry_policy: How requests that failed transiently (connection lost, UNAVAILABLE, 5xx,
            timeouts) and objects refused for such reasons are retried; others never are.
        retry_delays: Older spelling: the longest waits of the policy, one retry per entry.
        replication_factor: Replicas of a collection this store creates; None: 1 on a single
            node, min(3, nodes) on a cluster. Refused when it exceeds the nodes, and when an
            existing collection has another factor.
        consistency: "one", "quorum" or "all" replicas for every read, write and delete
            (searches, neighbour fetches, the unchanged-document check included).
        listing_patience: Seconds a whole-collection listing (documents, records_with_vectors)
            retries while it disagrees with the replicas' count before it raises
            ListingIncomplete (see `listed_whole`).
        tenant: The tenant (knowledge base) of a multi-tenant collection this store reads and
            writes; None for a single-tenant collection. Mixing is refused (TenancyMismatch).
            The first `create` of a tenant makes the collection multi-tenant if it is new.
    """

    def __init__(
        self,
        client: weaviate.WeaviateClient,
        collection_name: str,
        *,
        batch_size: int = 500,
        retry_policy: RetryPolicy | None = None,
        retry_delays: Sequence[float] | None = None,
        replication_factor: int | None = None,
        consistency: str = DEFAULT_CONSISTENCY,
        listing_patience: float = DEFAULT_LISTING_PATIENCE,
        tenant: str | None = None,
    ) -> None:
        self._tenant = checked_tenant_name(tenant)
        # Whether the collection on the server is multi-tenant, once read (it never changes).
        self._multi_tenant: bool | None = None
        if consistency.lower() not in CONSISTENCY_LEVELS:
            raise UsageError(
                f"unknown consistency {consistency!r}; use {', '.join(CONSISTENCY_LEVELS)}"
            )
        if replication_factor is not None and replication_factor < 1:
            raise UsageError(
                f"{setting('replication_factor')} must be at least 1, not {replication_factor}"
            )
        self._client = client
        self._replication_factor = replication_factor
        self._consistency = consistency.lower()
        self._listing_patience = listing_patience
        self._name = collection_name[:1].upper() + collection_name[1:]
        self._batch_size = batch_size
        if retry_policy is None and retry_delays is not None:
            delays = tuple(retry_delays)
            retry_policy = RetryPolicy(
                attempts=len(delays) + 1,
                base_delay=delays[0] if delays else 0.0,
                max_delay=max(delays, default=0.0),
                total_seconds=2 * sum(delays) + 1.0,
            )
        self._retry_policy = retry_policy or RetryPolicy()
        self._rng = random.Random()
        self._extras: dict[str, ExtraProperty] | None = None
        # Property names the collection has; a collection made by an older stitcher lacks the
        # core properties added since (e.g. "rules"): reads leave them out, writes add them.
        self._present: set[str] = set()
        self._references: set[str] = set()
        self._known_to_exist = False
        self._linker: MentionLinker | None = None  # made on the first mention
        self._unresolved: dict[str, dict[str, None]] = {}
        self._pending = WeaviatePending(client, self._name, self._tenant)

    @property
    def name(self) -> str:
        """The collection's name as the server spells it."""
        return self._name

    @property
    def tenant(self) -> str | None:
        """The tenant this store is bound to (None: a single-tenant collection)."""
        return self._tenant

    @property
    def scope(self) -> str:
        """What this store holds, for messages: "'Docs'" or "tenant 'kb1' of 'Docs'"."""
        return scope_of(self._name, self._tenant)

    def entities(self) -> EntityStore:
        """The entity collections (organizations, people) that belong to this collection."""
        return EntityStore(self._client, self._name, self._tenant)

    def layout(self) -> Layout:
        """Which layout the collection has: "stitcher", "seed" or "unknown" (see `detect_layout`).

        Raises:
            CollectionMissing: The collection does not exist.
        """
        return detect_layout(self._client, self._name)

    @property
    def consistency(self) -> str:
        """How many replicas answer each request: "one", "quorum" or "all"."""
        return self._consistency

    @property
    def _collection(self) -> Collection[Any, Any]:
        from weaviate.classes.config import ConsistencyLevel

        # Every read, write and delete of the chunks goes through here, so all of them carry
        # the consistency level (the client's own default is the server's, QUORUM).
        level = ConsistencyLevel[self._consistency.upper()]
        collection = self._client.collections.use(self._name).with_consistency_level(level)
        # A tenant is a shard of its own: every read, write, count and delete of this store
        # goes to it alone, so knowledge bases never see each other's chunks.
        return collection if self._tenant is None else collection.with_tenant(self._tenant)

    @property
    def _whole(self) -> Collection[Any, Any]:
        """The collection itself, above its tenants (schema, the tenant list)."""
        return self._client.collections.use(self._name)

    @property
    def url(self) -> str:
        """The server's REST address, for messages."""
        url = getattr(getattr(self._client, "_connection", None), "url", None)
        return str(url) if url else "the server"

    def _call(self, doing: str, action: Callable[[], T], policy: RetryPolicy | None = None) -> T:
        """Run one idempotent request, retrying transient failures with back-off and jitter.

        What still fails becomes a one-line ServerFault naming the server and what was being
        done (stitcher.faults); StitcherErrors pass through as they are.
        """
        try:
            return call_with_retries(
                action,
                is_transient=is_transient,
                policy=policy or self._retry_policy,
                rng=self._rng,
            )
        except StitcherError:
            raise
        except Exception as error:
            raise server_fault(
                classify(error), url=self.url, doing=doing, collection=self._name
            ) from None

    def _call_aggregate(self, doing: str, action: Callable[[], T]) -> T:
        """`_call` for aggregations, which take no consistency level: see
        stitcher.faults.past_a_dead_replica."""
        return self._call(doing, action, past_a_dead_replica(self._retry_policy))

    def exists(self) -> bool:
        """Whether the collection exists; for a tenant store, whether the tenant does.

        Raises:
            TenancyMismatch: A tenant store on a single-tenant collection.
        """
        found = bool(self._call("reading", lambda: self._client.collections.exists(self._name)))
        if not found or self._tenant is None:
            # Single-tenant: a multi-tenant collection is refused when its settings are read
            # (every command reads them before anything else), at no extra request.
            return found
        self._check_tenancy(self.is_multi_tenant())
        tenant = self._tenant
        return bool(self._call("reading the tenants", lambda: self._whole.tenants.exists(tenant)))

    # -- tenants -------------------------------------------------------------------------------

    def is_multi_tenant(self) -> bool:
        """Whether the (existing) collection has Weaviate multi-tenancy enabled."""
        if self._multi_tenant is None:
            config = self._call("reading the collection's settings", self._whole.config.get)
            self._multi_tenant = bool(config.multi_tenancy_config.enabled)
        return self._multi_tenant

    def _check_tenancy(self, multi_tenant: bool) -> None:
        """Refuse a tenant on a single-tenant collection and no tenant on a multi-tenant one."""
        self._multi_tenant = multi_tenant
        refusal = tenancy_mismatch(self._name, self._tenant, multi_tenant)
        if refusal is not None:
            raise refusal

    def tenants(self, *, count: bool = True) -> list[TenantInfo]:
        """The tenants of the collection, by name, with their activity status and, for the
        active ones when `count`, their chunks (an inactive tenant is not counted: a read
        would activate it).

        Raises:
            CollectionMissing: The collection does not exist.
            TenancyMismatch: The collection is single-tenant.
        """
        self._require_multi_tenant()
        found = self._call("reading the tenants", self._whole.tenants.get)
        infos = []
        for name in sorted(found):
            status = _status_name(found[name].activity_status)
            chunks = None
            if count and status == "ACTIVE":
                shard = self._whole.with_tenant(name)
                result = self._call_aggregate(
                    "counting", functools.partial(shard.aggregate.over_all, total_count=True)
                )
                chunks = int(result.total_count or 0)
            infos.append(TenantInfo(name, status, chunks))
        return infos

    def _require_multi_tenant(self) -> None:
        if not self._call("reading", lambda: self._client.collections.exists(self._name)):
            raise CollectionMissing(
                f"collection {self._name!r} does not exist; check {setting('collection')}"
            )
        if not self.is_multi_tenant():
            raise no_tenants(self._name)

    def set_tenant_active(self, name: str, active: bool) -> str:
        """Activate a tenant (load it) or deactivate it (unload it from memory, files kept on
        disk); returns its status before. Offloading to cloud storage needs Weaviate's
        offload-s3 module and is not offered.

        Raises:
            TenantMissing: The collection has no such tenant.
        """
        from weaviate.classes.tenants import Tenant, TenantActivityStatus

        tenant = checked_tenant_name(name)
        assert tenant is not None
        self._require_multi_tenant()
        found = self._call("reading the tenants", lambda: self._whole.tenants.get_by_name(tenant))
        if found is None:
            known = [info.name for info in self.tenants(count=False)]
            raise TenantMissing(
                f"collection {self._name!r} has no tenant {tenant!r}; its tenants: "
                f"{some_names(known)}"
            )
        status = TenantActivityStatus.ACTIVE if active else TenantActivityStatus.INACTIVE
        self._call(
            "changing a tenant's activity",
            lambda: self._whole.tenants.update([Tenant(name=tenant, activity_status=status)]),
        )
        return _status_name(found.activity_status)

    def collection_names(self) -> list[str]:
        """The server's collections, sorted, stitcher's bookkeeping ones left out."""
        names = self._call(
            "listing collections", lambda: self._client.collections.list_all(simple=True)
        )
        return sorted(set(names) - BOOKKEEPING_COLLECTIONS)

    def leases(self) -> WeaviateLeases:
        """The server's leases, in its `StitcherLease` collection."""
        return WeaviateLeases(self._client)

    def create(self, settings: CollectionSettings) -> None:
        """Create the collection with stitcher's schema and record `settings` in its description.

        The replication factor is this store's (see `replication_factor_to_create`), not the one
        in `settings`. Weaviate 1.38 runs async replication for every factor above 1 (the
        client's `async_enabled` is deprecated and dropped by the server), so a node that was
        down catches up on its own; deletes against updates are resolved by time.
        """
        from weaviate.classes.config import Configure, ReplicationDeletionStrategy

        if self._tenant is not None and self._client.collections.exists(self._name):
            self._join_existing(settings)
            return
        factor = self.replication_factor_to_create()
        multi_tenant = self._tenant is not None
        settings = dataclasses.replace(
            settings, replication_factor=factor, multi_tenant=multi_tenant
        )
        replication = Configure.replication(
            factor=factor,
            deletion_strategy=ReplicationDeletionStrategy.TIME_BASED_RESOLUTION,
        )
        # Tenants are created by their first ingest only (a typo in --tenant must not make a
        # new empty knowledge base); an inactive tenant is activated by the server when it is
        # read or written, so a deactivated knowledge base still answers (just slower once).
        tenancy = (
            Configure.multi_tenancy(
                enabled=True, auto_tenant_creation=False, auto_tenant_activation=True
            )
            if multi_tenant
            else None
        )
        try:
            self._call(
                "creating the collection",
                lambda: self._client.collections.create(
                    self._name,
                    description=settings_to_description(settings),
                    properties=core_properties(),
                    vector_config=Configure.Vectors.self_provided(
                        vector_index_config=vector_index_for(settings.vector_index)
                    ),
                    replication_config=replication,
                    multi_tenancy_config=tenancy,
                ),
            )
        except StitcherError:
            # The first ingests of two tenants, or of two sources, at once (their locks are
            # apart): the other made the collection, which is just as good if it made it with
            # these settings. `_call` has turned the refusal into a ServerFault; anything else
            # is re-raised as it is.
            if not self._client.collections.exists(self._name):
                raise
            self._join_existing(settings)
            return
        self._multi_tenant = multi_tenant
        if multi_tenant:
            self._add_tenant()
        self._extras = {}
        self._present = set(CORE_PROPERTIES)
        self._references = set()
        self._known_to_exist = True

    def _join_existing(self, settings: CollectionSettings) -> None:
        """Use the collection that exists already (made by another tenant's first ingest, or by
        a first ingest of another source that ran at the same time), adding this store's tenant
        to it: only if it was built with `settings`.

        Raises:
            TenancyMismatch: The collection is single-tenant and this store has a tenant, or the
                other way round.
            SettingsMismatch: The collection was built with another model or chunking.
        """
        config = self._call("reading the collection's settings", self._whole.config.get)
        self._check_tenancy(bool(config.multi_tenancy_config.enabled))
        recorded = settings_from_description(config.description)
        if recorded is None:
            raise SettingsMismatch(
                f"collection {self._name!r} was not created by stitcher (no settings recorded "
                f"on it); ingest into another {setting('collection')}"
            )
        differences = settings.differences(recorded)
        if differences:
            shared = (
                "Its tenants share its model and chunking"
                if self._tenant is not None
                else "Another ingest created it just now"
            )
            raise SettingsMismatch(
                f"collection {self._name!r} was built with other settings: "
                + "; ".join(differences)
                + f". {shared}: use them, or ingest into another {setting('collection')}"
            )
        self._multi_tenant = self._tenant is not None
        if self._tenant is not None:
            self._add_tenant()
        self._extras = None  # read from the schema, which other writers may have extended
        self._known_to_exist = True

    def _add_tenant(self) -> None:
        from weaviate.classes.tenants import Tenant

        tenant = self._tenant
        assert tenant is not None
        # Creating a tenant that exists is accepted by the server: two first ingests may race.
        self._call("creating the tenant", lambda: self._whole.tenants.create([Tenant(name=tenant)]))

    def settings(self) -> CollectionSettings | None:
        """The settings recorded on the collection, or None when it has none (foreign layout)."""
        self._require()
        config = self._call("reading the collection's settings", self._collection.config.get)
        multi_tenant = bool(config.multi_tenancy_config.enabled)
        self._check_tenancy(multi_tenant)
        recorded = settings_from_description(config.description)
        if recorded is None:
            return None
        # The server's factor is the truth (replica movement can change it behind our back).
        return dataclasses.replace(
            recorded,
            replication_factor=config.replication_config.factor,
            multi_tenant=multi_tenant,
        )

    # -- replication --------------------------------------------------------------------------

    def node_count(self) -> int:
        """Nodes of the cluster the client is connected to (1 for a single server)."""
        nodes = self._call("listing the cluster's nodes", self._client.cluster.nodes)
        return max(1, len(nodes))

    def replication_factor_to_create(self) -> int:
        """The factor a new collection gets: the requested one, else 1 or min(3, nodes).

        Raises:
            UsageError: The requested factor exceeds the cluster's nodes.
        """
        nodes = self.node_count()
        if self._replication_factor is None:
            return min(DEFAULT_CLUSTER_REPLICATION, nodes)
        if self._replication_factor > nodes:
            raise UsageError(
                f"{setting('replication_factor', self._replication_factor)} is more than the "
                f"{nodes} node{'s' if nodes != 1 else ''} of the Weaviate at {self.url}: each "
                "replica needs a node of its own; use at most "
                f"{nodes} (or start more nodes, e.g. `stitcher server start --nodes 3`)"
            )
        return self._replication_factor

    def check_replication(self) -> None:
        """Refuse a requested replication factor before anything is written.

        A new collection: the factor must fit the cluster. An existing one: it must be the
        collection's own (Weaviate cannot change it by updating the collection).

        Raises:
            UsageError: The factor exceeds the cluster's nodes.
            SettingsMismatch: The collection exists with another factor.
        """
        if not self.exists():
            self.replication_factor_to_create()
            return
        if self._replication_factor is None:
            return
        config = self._call("reading the collection's settings", self._collection.config.get)
        actual = config.replication_config.factor
        if actual != self._replication_factor:
            raise SettingsMismatch(
                f"collection {self._name!r} was built with other settings: replication_factor: "
                f"{actual} (collection) != {self._replication_factor} (requested). Weaviate "
                "cannot change it on an existing collection: drop "
                f"{setting('replication_factor')}, or ingest into another {setting('collection')}"
            )

    def replication(self) -> dict[str, Any]:
        """Replication factor, async replication, and the nodes holding each shard."""
        self._require()
        config = self._call("reading the collection's settings", self._collection.config.get)
        nodes = self._call(
            "listing the collection's shards",
            lambda: self._client.cluster.nodes(collection=self._name, output="verbose"),
        )
        shards: dict[str, list[str]] = {}
        for node in nodes:
            for shard in node.shards or []:
                # A tenant is a shard named after it; the others are other knowledge bases.
                if self._tenant is None or shard.name == self._tenant:
                    shards.setdefault(shard.name, []).append(node.name)
        return {
            "replication_factor": config.replication_config.factor,
            "consistency": self._consistency.upper(),
            "shards": {name: sorted(held_by) for name, held_by in sorted(shards.items())},
        }

    def count(self) -> int:
        """Number of chunk objects.

        On a replicated collection Weaviate asks every replica of each shard for its count and
        takes the most common answer (the median if all differ), so one replica that is behind
        does not change it: this is the number a whole listing is checked against.
        """
        self._require()
        result = self._call_aggregate(
            "counting", lambda: self._collection.aggregate.over_all(total_count=True)
        )
        return int(result.total_count or 0)

    def documents(self) -> dict[str, StoredDocument]:
        """Every document, keyed by doc_id.

        One aggregate query grouped by doc_id (about 5x faster than walking 10k chunks). Its
        answer is checked for completeness (chunk counts add up per document and overall); if it
        does not, e.g. a document with more stored versions than the aggregate lists, the
        collection is walked with the cursor API instead. Either listing comes from one replica
        per shard, so it is taken only when it agrees with the replicas' count (`listed_whole`):
        ingest's unchanged/changed/vanished decisions and --prune never act on a replica that
        is behind.

        Raises:
            ListingIncomplete: The listing stayed short of the count for `listing_patience`.
        """
        self._require()
        self._load_extras()

        def listing(total: int) -> tuple[dict[str, StoredDocument], int]:
            if total == 0:
                return {}, 0
            with_rules = "rules" in self._present
            grouped = self._call_aggregate(
                "listing documents",
                lambda: documents_by_aggregate(self._collection, total, with_rules=with_rules),
            )
            if grouped is None:
                grouped = self._call(
                    "listing documents",
                    lambda: documents_by_walk(self._collection, with_rules=with_rules),
                )
            return grouped, sum(doc.chunk_count for doc in grouped.values())

        listed = self.listed_whole("listing documents", listing)
        incomplete = self._call("listing incomplete documents", self._pending.incomplete)
        return {
            doc_id: dataclasses.replace(doc, complete=False) if doc_id in incomplete else doc
            for doc_id, doc in listed.items()
        }

    def begin_documents(self, documents: Sequence[PendingDocument]) -> None:
        """Record these document versions as incomplete (stitcher.store.weaviate.pending), in one
        request, before any of their chunks is sent."""
        self._require()
        self._call("recording documents as being written", lambda: self._pending.begin(documents))

    def finish_documents(self, doc_ids: Sequence[str]) -> None:
        """These documents are complete (or gone): their incomplete records go, in one request."""
        self._call("recording documents as complete", lambda: self._pending.finish(doc_ids))

    def listed_whole(self, doing: str, listing: Callable[[int], tuple[T, int]]) -> T:
        """Run `listing(count)` until the number of objects it saw lies between the replicas'
        count before and after it; retried with back-off for `listing_patience` seconds.
        `listing` gets the count before and returns (its result, objects it saw).

        Why: a listing is served by one replica per shard (the coordinator's own first) and the
        consistency level only re-checks the objects it returned, so a replica that missed
        writes (down at the time, or its commit still in flight when QUORUM was reached) lists
        too few, silently. `count()` polls every replica. Between the two counts, not equal to
        both: another writer (a different source, another host) may be busy meanwhile.

        Raises:
            ListingIncomplete: Still outside after `listing_patience` seconds.
        """
        deadline = time.monotonic() + self._listing_patience
        attempt = 0
        while True:
            before = self.count()
            found, listed = listing(before)
            after = self.count()
            if between_counts(listed, before, after):
                return found
            delay = _LISTING_DELAYS[min(attempt, len(_LISTING_DELAYS) - 1)]
            attempt += 1
            if time.monotonic() + delay > deadline:
                raise self._incomplete(doing, listed, before, after, attempt)
            time.sleep(delay)

    def _incomplete(
        self, doing: str, listed: int, before: int, after: int, attempts: int
    ) -> ListingIncomplete:
        counted = str(before) if before == after else f"{before}, then {after}"
        waited = f" ({attempts} attempts in {self._listing_patience:.0f} s)" if attempts > 1 else ""
        return ListingIncomplete(
            f"{doing} of collection {self._name!r} through {self.url} saw {listed} chunks, but "
            f"its replicas count {counted}{waited}: the node answering lists only its own copy, "
            "which is behind (a node restarted or lost writes; async replication catches up "
            "within minutes), or the collection is being written to. Nothing was decided on "
            "the listing; run the command again later, or through another node"
        )

    def vectors_by_chunk_hash(
        self, doc_id: str, chunk_hashes: Iterable[str]
    ) -> dict[str, list[float]]:
        """Stored vectors of this document's chunks (any version) whose hash is in the set.

        Not checked like a whole listing: the filtered fetch is served by one replica, and one
        that is behind returns fewer, whose chunks are then embedded again. A vector found is
        never wrong: same chunk text, same model (the collection's settings are checked).
        """
        from weaviate.classes.query import Filter

        self._require()
        wanted = sorted(set(chunk_hashes))
        vectors: dict[str, list[float]] = {}
        for begin in range(0, len(wanted), _HASHES_PER_QUERY):
            group = wanted[begin : begin + _HASHES_PER_QUERY]
            condition = Filter.by_property("doc_id").equal(doc_id) & Filter.by_property(
                "chunk_hash"
            ).contains_any(group)
            result = self._call(
                "reading stored vectors",
                functools.partial(
                    self._collection.query.fetch_objects,
                    filters=condition,
                    include_vector=True,
                    return_properties=["chunk_hash"],
                    limit=MAX_RESULTS,
                ),
            )
            for obj in result.objects:
                vector = default_vector(obj.vector)
                if vector is not None:
                    vectors[str(obj.properties["chunk_hash"])] = vector
        return vectors

    def write(
        self, records: Sequence[ChunkRecord], vectors: Sequence[Sequence[float]]
    ) -> list[WriteFailure]:
        """Insert or replace `records` (same id replaces); returns what could not be stored.

        Objects refused for a reason that may pass (UNAVAILABLE, timeouts, 5xx) are re-sent
        under the same ids, with back-off and jitter (the retry policy); objects refused for
        good (validation, vector length) are returned at once, never dropped. A metadata value
        whose type does not fit its property fails its record without a request. Vectors may
        be float32 arrays. Not thread-safe: one writer at a time.

        Raises:
            ServerFault: The server stayed unreachable, or refuses every write (disk full,
                read-only) or no longer has stitcher's schema: nothing more can be written.
        """
        self._require()
        if len(records) != len(vectors):
            raise UsageError(f"write: {len(records)} records but {len(vectors)} vectors")
        extras = self._load_extras()
        self._add_missing_core_properties()
        planned = dict(extras)
        failures: list[WriteFailure] = []
        pending: dict[str, tuple[ChunkRecord, dict[str, Any], Sequence[float]]] = {}
        for record, vector in zip(records, vectors, strict=True):
            try:
                values, new = plan_properties(record, planned)
            except MetadataConflict as exc:
                failures.append(WriteFailure(record.id, record.doc_id, str(exc)))
                continue
            for extra in new:
                planned[extra.name] = extra
            pending[record.id] = (record, record_to_properties(record, values), vector)
        self._add_properties([planned[name] for name in planned if name not in extras])
        references = self._mention_references([item[0] for item in pending.values()])

        started = time.monotonic()
        delays = self._retry_policy.delays(self._rng)
        while pending:
            errors = self._send(pending, references)
            refused = {key: reason for key, reason in errors.items() if key in pending}
            pending = {key: pending[key] for key in refused}
            faults = {key: classify(reason) for key, reason in refused.items()}
            fatal = next((f for f in faults.values() if f.kind in ("read_only", "schema")), None)
            if fatal is not None:
                raise server_fault(fatal, url=self.url, doing="writing", collection=self._name)
            delay = next(delays, None) if any(f.transient for f in faults.values()) else None
            budget_left = self._retry_policy.total_seconds - (time.monotonic() - started)
            if delay is None or delay > budget_left:
                failures.extend(
                    WriteFailure(key, pending[key][0].doc_id, reason)
                    for key, reason in refused.items()
                )
                break
            # Only what may pass is re-sent; a refusal for good is final now.
            for key, fault in faults.items():
                if not fault.transient:
                    failures.append(WriteFailure(key, pending.pop(key)[0].doc_id, refused[key]))
            time.sleep(delay)
        return failures

    def delete_document(self, doc_id: str, keep_doc_hash: str | None = None) -> int:
        """Delete the document's chunks except those of version `keep_doc_hash`; returns count.

        Raises:
            WriteFailed: The server reported objects it could not delete.
        """
        from weaviate.classes.query import Filter

        self._require()
        condition = Filter.by_property("doc_id").equal(doc_id)
        if keep_doc_hash is not None:
            condition = condition & Filter.by_property("doc_hash").not_equal(keep_doc_hash)
        deleted = 0
        while True:  # each call deletes at most MAX_RESULTS objects
            # verbose: the per-object errors tell a full disk (read-only shards) from a refusal
            # of one object, which the summary line must name differently.
            result = self._call(
                "deleting an old version",
                lambda: self._collection.data.delete_many(where=condition, verbose=True),
            )
            deleted += result.successful
            if result.failed:
                reasons = [obj.error for obj in result.objects if not obj.successful and obj.error]
                faults = [classify(reason) for reason in reasons]
                fatal = next((f for f in faults if f.kind in ("read_only", "schema")), None)
                if fatal is not None:
                    raise server_fault(fatal, url=self.url, doing="deleting", collection=self._name)
                because = f" ({reasons[0]})" if reasons else " (Weaviate's log has the reason)"
                raise WriteFailed(
                    f"could not delete {result.failed} chunks of {doc_id!r} from collection "
                    f"{self._name!r}{because}; run the command again"
                )
            if result.matches == 0 or result.successful == 0:
                if keep_doc_hash is None:  # the whole document is gone
                    self.finish_documents([doc_id])
                return deleted

    def fetch(self, ids: Sequence[str]) -> list[ChunkRecord]:
        """The records with these ids that exist, in any order (any number of ids)."""
        from weaviate.classes.query import Filter

        self._require()
        unique = list(dict.fromkeys(ids))
        records: list[ChunkRecord] = []
        for begin in range(0, len(unique), _IDS_PER_QUERY):
            group = unique[begin : begin + _IDS_PER_QUERY]
            # fetch_objects_by_ids would stop at the server's default limit of 10 objects.
            result = self._collection.query.fetch_objects(
                filters=Filter.by_id().contains_any(group),
                limit=len(group),
                return_properties=self._return_properties(),
            )
            records.extend(self._to_record(obj) for obj in result.objects)
        return records

    def fetch_spans(self, requests: Sequence[SpanRequest]) -> list[ChunkRecord]:
        """All chunks overlapping any requested range of a document version, in one query."""
        from weaviate.classes.query import Filter

        self._require()
        unique = list(dict.fromkeys(requests))
        if not unique:
            return []
        clauses = [
            Filter.all_of(
                [
                    Filter.by_property("doc_id").equal(request.doc_id),
                    Filter.by_property("doc_hash").equal(request.doc_hash),
                    Filter.by_property("start").less_than(request.hi),
                    Filter.by_property("end").greater_than(request.lo),
                ]
            )
            for request in unique
        ]
        result = self._call(
            "reading chunks",
            functools.partial(
                self._collection.query.fetch_objects,
                filters=clauses[0] if len(clauses) == 1 else Filter.any_of(clauses),
                limit=MAX_RESULTS,
                return_properties=self._return_properties(),
            ),
        )
        if len(result.objects) >= MAX_RESULTS and len(unique) > 1:
            # Possibly cut off by the server's result cap: ask for each half separately.
            middle = len(unique) // 2
            return self.fetch_spans(unique[:middle]) + self.fetch_spans(unique[middle:])
        return [self._to_record(obj) for obj in result.objects]

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
        """Hybrid query: BM25 on `text_seg` over `keyword_text` plus the vector; see Hit.explain."""
        from weaviate.classes.query import MetadataQuery

        self._require()
        fusion_type = weaviate_fusion(fusion)
        result = self._call(
            "searching",
            functools.partial(
                self._collection.query.hybrid,
                query=keyword_text,
                vector=vector,
                alpha=alpha,
                fusion_type=fusion_type,
                query_properties=["text_seg"],
                limit=limit,
                filters=translate(where, self._load_extras(), self._references, self._name),
                return_metadata=MetadataQuery(score=True, explain_score=True),
                return_properties=self._return_properties(),
            ),
        )
        hits = []
        for obj in result.objects:
            raw = obj.metadata.explain_score or ""
            explain = parse_explain(raw, alpha, fusion)
            hits.append(Hit(self._to_record(obj), float(obj.metadata.score or 0.0), explain))
        return hits

    def fields(self) -> dict[str, str]:
        """Filterable fields (core and metadata) with their kinds."""
        self._require()
        return dict(user_fields(self._load_extras()))

    def stored_values(self, field: str, limit: int = MAX_RESULTS) -> list[str]:
        """Distinct values of a text field (`source`: the source names), most common first; one
        aggregate query (stitcher.filtervalues says when it is worth asking)."""
        from weaviate.classes.aggregate import GroupByAggregate

        self._require()
        name = "doc_id" if field == SOURCE_FIELD else resolve_field(field, self._load_extras())[0]
        # Grouping, not the text metric's top occurrences: those come back with backslashes
        # doubled (verified on v1.38.11), so a stored value would not compare equal to itself.
        result = self._collection.aggregate.over_all(
            group_by=GroupByAggregate(prop=name, limit=limit), total_count=True
        )
        counts: Counter[str] = Counter()
        for group in result.groups:
            value = str(group.grouped_by.value)
            counts[source_name(value) if field == SOURCE_FIELD else value] += group.total_count or 0
        return [value for value, _ in counts.most_common()]

    def heads(
        self, where: Where | None = None, *, limit: int = 100, newest_first: bool = False
    ) -> list[ChunkRecord]:
        """First chunks of matching documents, filtered inside Weaviate, newest first if asked."""
        from weaviate.classes.query import Filter, Sort

        self._require()
        first = Filter.by_property("chunk_index").equal(0)
        condition = translate(where, self._load_extras(), self._references, self._name)
        result = self._collection.query.fetch_objects(
            filters=first if condition is None else first & condition,
            sort=Sort.by_property("date", ascending=False) if newest_first else None,
            limit=min(limit, MAX_RESULTS),
            return_properties=self._return_properties(),
        )
        return [self._to_record(obj) for obj in result.objects]

    def sample(self, limit: int = 100) -> list[ChunkRecord]:
        """Up to `limit` chunks."""
        self._require()
        result = self._collection.query.fetch_objects(
            limit=min(limit, MAX_RESULTS), return_properties=self._return_properties()
        )
        return [self._to_record(obj) for obj in result.objects]

    def records_with_vectors(
        self, page_size: int = 500
    ) -> Iterator[tuple[ChunkRecord, list[float]]]:
        """Every chunk with its vector, in id order, through the cursor API (`after` the last
        id, `page_size` objects per request): memory stays constant however big the collection.

        The pages come from one replica per shard; once the last is read, the number of objects
        is checked against the replicas' count before and after (see `listed_whole`). Already
        streamed, so not retried: the caller (export) must not call its output complete.

        Raises:
            ServerFault: A page could not be read even after retries.
            ListingIncomplete: After the last page: fewer (or more) objects than counted.
        """
        self._require()
        properties = self._return_properties()
        before = self.count()
        listed = 0
        after: str | None = None
        while True:
            page = self._call(
                "reading every object",
                functools.partial(
                    self._collection.query.fetch_objects,
                    limit=page_size,
                    after=after,
                    include_vector=True,
                    return_properties=properties,
                ),
            )
            for obj in page.objects:
                yield self._to_record(obj), default_vector(obj.vector) or []
            listed += len(page.objects)
            if len(page.objects) < page_size:
                break
            after = str(page.objects[-1].uuid)
        counted = self.count()
        if not between_counts(listed, before, counted):
            raise self._incomplete("reading every object", listed, before, counted, 1)

    def _require(self) -> None:
        if self._known_to_exist:
            return
        if not self.exists():
            if self._tenant is not None and self._client.collections.exists(self._name):
                raise TenantMissing(
                    f"collection {self._name!r} has no tenant {self._tenant!r}; run `stitcher "
                    f"ingest` with it to create it, or check {setting('tenant')} (`stitcher "
                    f"tenants -c {self._name}` lists them)"
                )
            raise CollectionMissing(
                f"collection {self._name!r} does not exist on the server; "
                f"run `stitcher ingest` to create it or check {setting('collection')}"
            )
        self._known_to_exist = True

    def _load_extras(self, refresh: bool = False) -> dict[str, ExtraProperty]:
        if self._extras is None or refresh:
            config = self._call("reading the collection's schema", self._collection.config.get)
            self._references = {ref.name for ref in config.references}
            self._present = {prop.name for prop in config.properties}
            extras = {}
            for prop in config.properties:
                if prop.name in CORE_PROPERTIES:
                    continue
                kind = kind_of_property(str(prop.data_type.value), prop.tokenization)
                if kind is not None:
                    extras[prop.name] = extra_from_description(prop.name, kind, prop.description)
            self._extras = extras
        return self._extras

    def _add_properties(self, new: list[ExtraProperty]) -> None:
        from weaviate.exceptions import UnexpectedStatusCodeError

        for extra in new:
            try:
                self._collection.config.add_property(extra_property(extra))
            except UnexpectedStatusCodeError:
                # Another writer may have added it meanwhile; fail only if it is still missing.
                if extra.name not in self._load_extras(refresh=True):
                    raise
            assert self._extras is not None
            self._extras[extra.name] = extra

    def _add_missing_core_properties(self) -> None:
        """Bring a collection made by an older stitcher up to the current core layout.

        Objects stored before keep no value for the new properties (read back as None), which
        is how ingest recognises chunks made under older text rules.
        """
        from weaviate.exceptions import UnexpectedStatusCodeError

        for prop in core_properties():
            if prop.name in self._present:
                continue
            try:
                self._collection.config.add_property(prop)
            except UnexpectedStatusCodeError:
                # Another writer may have added it meanwhile; fail only if it is still missing.
                self._load_extras(refresh=True)
                if prop.name not in self._present:
                    raise
            self._present.add(prop.name)

    # -- sources ------------------------------------------------------------------------------

    def source_roots(self) -> dict[str, str]:
        """The folder each source of this collection was registered from, by source name."""
        from weaviate.classes.query import Filter

        if not self._client.collections.exists(SOURCES_COLLECTION):
            return {}
        registry = self._client.collections.use(SOURCES_COLLECTION)
        where = Filter.by_property("collection").equal(self._name)
        if self._tenant is not None:
            if not has_property(registry, "tenant"):
                return {}  # no tenant ever registered a source on this server
            where = where & Filter.by_property("tenant").equal(self._tenant)
        result = registry.query.fetch_objects(
            filters=where,
            limit=MAX_RESULTS,
            return_properties=["source", "root"],
        )
        return {str(o.properties["source"]): str(o.properties["root"]) for o in result.objects}

    def register_source(self, name: str, root: str) -> None:
        """Record (or move) source `name` of this collection to the folder `root`."""
        ensure_bookkeeping_collection(
            self._client,
            SOURCES_COLLECTION,
            "stitcher: the folder each source of a collection is ingested from",
            {
                "collection": "text",
                "source": "text",
                "root": "text",
                "host": "text",
                "registered_at": "date",
            },
        )
        registry = self._client.collections.use(SOURCES_COLLECTION)
        properties: dict[str, Any] = {
            "collection": self._name,
            "source": name,
            "root": root,
            "host": socket.gethostname(),
            "registered_at": dt.datetime.now(dt.timezone.utc),
        }
        object_id = bookkeeping_uuid(self._name, name)
        if self._tenant is not None:
            # Each tenant registers its sources apart: two knowledge bases may both have a
            # source "docs", from different folders.
            ensure_text_property(registry, "tenant")
            properties["tenant"] = self._tenant
            object_id = bookkeeping_uuid(self._name, name, "tenant", self._tenant)
        if registry.data.exists(object_id):
            registry.data.replace(uuid=object_id, properties=properties)
        else:
            registry.data.insert(properties=properties, uuid=object_id)

    def drop(self, *, all_tenants: bool = False) -> bool:
        """Delete the collection and forget its registered sources; False when it did not exist.

        A tenant store deletes its tenant only (its chunks and sources; the collection and the
        other tenants stay). A multi-tenant collection as a whole is deleted only with
        `all_tenants`.

        Raises:
            TenancyMismatch: A multi-tenant collection without `all_tenants`, or a tenant
                store on a single-tenant collection.
        """
        if self._tenant is not None:
            if not self.exists():
                return False
            tenant = self._tenant
            self._call("removing the tenant", lambda: self._whole.tenants.remove([tenant]))
            self._known_to_exist = False
            self.forget_sources()
            self._pending.forget_all()
            return True
        if not self.exists():
            return False
        if not all_tenants and self.is_multi_tenant():
            held = len(self._call("reading the tenants", self._whole.tenants.get))
            raise TenancyMismatch(
                f"collection {self._name!r} is multi-tenant and holds {held} tenant"
                f"{'s' if held != 1 else ''}: drop one with {setting('tenant', 'NAME')}, or the "
                f"collection with all of them with {setting('all_tenants', True)}"
            )
        self._client.collections.delete(self._name)
        self._known_to_exist = False
        self.forget_sources()
        self._pending.forget_all()
        return True

    def forget_sources(self) -> None:
        """Remove this collection's sources from the registry (the collection was dropped)."""
        from weaviate.classes.query import Filter

        if not self._client.collections.exists(SOURCES_COLLECTION):
            return
        registry = self._client.collections.use(SOURCES_COLLECTION)
        # The whole collection: every entry of it, its tenants' included.
        where = Filter.by_property("collection").equal(self._name)
        if self._tenant is not None:
            if not has_property(registry, "tenant"):
                return
            where = where & Filter.by_property("tenant").equal(self._tenant)
        registry.data.delete_many(where=where)

    def take_unresolved_mentions(self) -> dict[str, list[str]]:
        """Names in `mentions` that no organization has, by doc_id, since the last call.

        The names stay stored in the chunks' `mentions` property either way; `stitcher
        entities load` links them once an organization with that name or alias is loaded.
        """
        found = {doc_id: list(names) for doc_id, names in self._unresolved.items()}
        self._unresolved = {}
        return found

    def _mention_references(self, records: Sequence[ChunkRecord]) -> dict[str, list[str]]:
        """Object ids of the organizations each record's document mentions, by record id."""
        wanted = [r for r in records if r.metadata.get(MENTIONS)]
        if not wanted:
            return {}
        if self._linker is None:
            self._linker = MentionLinker(self._client, self._name)
            if self._linker.prepare():
                self._references.add(MENTIONS_REF)
        references: dict[str, list[str]] = {}
        for record in wanted:
            raw = record.metadata[MENTIONS]
            names = [raw] if isinstance(raw, str) else [str(name) for name in raw]
            ids, unresolved = self._linker.link(names)
            if ids:
                references[record.id] = ids
            if unresolved:
                self._unresolved.setdefault(record.doc_id, {}).update(dict.fromkeys(unresolved))
        return references

    def _send(
        self,
        pending: dict[str, tuple[ChunkRecord, dict[str, Any], Sequence[float]]],
        references: dict[str, list[str]] | None = None,
    ) -> dict[str, str]:
        """One pass of batch requests; returns {id: reason} for the objects not stored.

        Uses `data.insert_many` (the same gRPC batch endpoint as `collection.batch`) because it
        answers synchronously with per-object errors: the batch context manager waits about a
        second before sending a partial batch, which for a small document costs more than the
        write itself. A request that fails as a whole (timeout, connection) is re-sent under
        the same ids by `_call`: whether it landed is unknown, and re-sending replaces.
        """
        from weaviate.classes.data import DataObject
        from weaviate.exceptions import WeaviateInsertManyAllFailedError

        collection = self._collection
        references = references or {}
        items = list(pending.items())
        errors: dict[str, str] = {}
        for begin in range(0, len(items), self._batch_size):
            group = items[begin : begin + self._batch_size]
            objects = [
                DataObject(
                    properties=properties,
                    uuid=object_id,
                    # Kept as float32 arrays until here: one list per request, not per corpus.
                    vector=_as_list(vector),
                    references={MENTIONS_REF: references[object_id]}
                    if object_id in references
                    else None,
                )
                for object_id, (_record, properties, vector) in group
            ]

            def insert(objects: list[DataObject[Any, Any]] = objects) -> Any:
                # Every object refused is an answer, not a failed request: each object's
                # reason decides (in write) whether it is sent again.
                try:
                    return collection.data.insert_many(objects)
                except WeaviateInsertManyAllFailedError as exc:
                    return exc

            result = self._call("writing", insert)
            if isinstance(result, WeaviateInsertManyAllFailedError):
                errors.update((object_id, _reason(result)) for object_id, _item in group)
                continue
            for index, failed in result.errors.items():
                errors[group[index][0]] = failed.message
        return errors

    def _return_properties(self) -> list[str]:
        extras = self._load_extras()
        names = [name for name in CORE_PROPERTIES if name != "text_seg" and name in self._present]
        return names + sorted(extras)

    def _to_record(self, obj: Any) -> ChunkRecord:
        return properties_to_record(str(obj.uuid), obj.properties, self._load_extras())

    # -- seed layout, markers, siblings (issue 14): what adopt and seed search need ----------
    # Plain handles, as adopt and seed search used before they went through the store: no
    # retries and the client's default consistency (QUORUM, the store's default too). A sibling
    # is another collection, so it has no tenant; objects are read from this store's tenant.

    @property
    def _plain(self) -> Collection[Any, Any]:
        handle = self._client.collections.use(self._name)
        return handle if self._tenant is None else handle.with_tenant(self._tenant)

    def sibling(self, name: str) -> WeaviateStore:
        """The store of collection `name` on the same server, with this one's settings."""
        return WeaviateStore(
            self._client,
            name,
            batch_size=self._batch_size,
            retry_policy=self._retry_policy,
            replication_factor=self._replication_factor,
            consistency=self._consistency,
            listing_patience=self._listing_patience,
        )

    def marker(self, key: str) -> dict[str, Any]:
        """The record under `key` in the collection's description; {} when there is none."""
        description = self._client.collections.use(self._name).config.get().description
        try:
            marker = json.loads(description or "{}").get(key)
        except (ValueError, AttributeError):
            return {}
        return marker if isinstance(marker, dict) else {}

    def set_marker(self, key: str, record: Mapping[str, Any]) -> None:
        """Put `record` under `key` in the collection's description, next to the settings."""
        handle = self._client.collections.use(self._name)
        payload = json.loads(handle.config.get().description or "{}")
        payload[key] = dict(record)
        handle.config.update(description=json.dumps(payload, sort_keys=True))

    def seed_objects(
        self, properties: Sequence[str] | None = None, *, vectors: bool = True
    ) -> list[SeedObject]:
        """Every object as stored, walked with the cursor and checked against every replica's
        count (`listed_whole`: a cursor lists one replica's copy)."""
        handle = self._plain
        wanted = None if properties is None else list(properties)

        def listing(_count: int) -> tuple[list[SeedObject], int]:
            found = [
                to_seed_object(obj, with_vector=vectors)
                for obj in handle.iterator(
                    include_vector=vectors, return_properties=wanted, cache_size=1000
                )
            ]
            return found, len(found)

        return self.listed_whole(f"reading {self._name}", listing)

    def seed_hybrid(
        self, query: str, vector: list[float], *, limit: int, alpha: float, fusion: str
    ) -> list[tuple[SeedObject, float, ScoreExplain | None]]:
        """Hybrid query on the seed's schema: BM25 on its word-tokenized `text`."""
        from weaviate.classes.query import MetadataQuery

        result = self._plain.query.hybrid(
            query=query,
            vector=vector,
            alpha=alpha,
            fusion_type=weaviate_fusion(fusion),
            query_properties=[SEED_TEXT],
            limit=limit,
            return_metadata=MetadataQuery(score=True, explain_score=True),
        )
        return [
            (
                to_seed_object(obj),
                float(obj.metadata.score or 0.0),
                parse_explain(obj.metadata.explain_score or "", alpha, fusion),
            )
            for obj in result.objects
        ]

    def seed_hop(self, parent_ids: Sequence[str], child_of: Sequence[str]) -> list[SeedObject]:
        """One fetch: objects by id, or whose `parent_id` is one of `child_of`."""
        from weaviate.classes.query import Filter

        clauses = []
        if parent_ids:
            clauses.append(Filter.by_id().contains_any(list(parent_ids)))
        if child_of:
            # parent_id is word-tokenized text in the seed's auto-schema: the caller checks the
            # match exactly (seed_search.Neighbourhood.add_hop); the limit leaves room for
            # chance matches.
            clauses.append(Filter.by_property(SEED_PARENT).contains_any(list(child_of)))
        if not clauses:
            return []
        result = self._plain.query.fetch_objects(
            filters=clauses[0] if len(clauses) == 1 else Filter.any_of(clauses),
            limit=min(MAX_HOP_FETCH, 2 * (len(parent_ids) + len(child_of)) + 10),
        )
        return [to_seed_object(obj) for obj in result.objects]


def _reason(exc: Exception) -> str:
    # "Every object failed during insertion. Here is the set of all errors: <reasons>"
    message = str(exc)
    marker = "set of all errors: "
    return message.split(marker, 1)[1].strip() if marker in message else message


def _as_list(vector: Sequence[float]) -> list[float]:
    tolist = getattr(vector, "tolist", None)  # a numpy array
    return tolist() if callable(tolist) else [float(x) for x in vector]


def _status_name(status: Any) -> str:
    """ "ACTIVE", "INACTIVE", ...: the client's names (its HOT/COLD/FROZEN are old spellings)."""
    name = str(getattr(status, "value", status))
    return {"HOT": "ACTIVE", "COLD": "INACTIVE", "FROZEN": "OFFLOADED"}.get(name, name)
