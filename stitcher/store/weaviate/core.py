"""What every part of the Weaviate store shares: the client, the collection's handles at the
store's consistency level and tenant, and requests sent with retries (stitcher.retry) whose
failures become one-line ServerFaults (stitcher.faults); whether the collection (or tenant)
exists, and whether it is multi-tenant.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from stitcher.errors import CollectionMissing, StitcherError, TenantMissing, UsageError, setting
from stitcher.faults import past_a_dead_replica, server_fault
from stitcher.ids import checked_tenant_name
from stitcher.retry import RetryPolicy, call_with_retries
from stitcher.store.base import scope_of
from stitcher.store.schema import ExtraProperty, tenancy_mismatch
from stitcher.store.weaviate.faults import classify_client_error, is_transient_client_error
from stitcher.store.weaviate.mentions import MentionLinker
from stitcher.store.weaviate.pending import WeaviatePending

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate
    from weaviate.collections import Collection

#: How many replicas must answer a read or acknowledge a write (`--consistency`).
CONSISTENCY_LEVELS = ("one", "quorum", "all")
DEFAULT_CONSISTENCY = "quorum"
#: Seconds a whole-collection listing waits for the replica answering it to catch up. Weaviate
#: 1.38 serves a listing (cursor, filtered fetch, group-by aggregate) from ONE replica per shard,
#: the coordinator's own if it has one, whatever the consistency level; async replication
#: repairs a replica that is behind with a hashbeat every 30 s, propagating objects once they
#: are 30 s old, so about a minute, two on a loaded machine.
DEFAULT_LISTING_PATIENCE = 120.0

T = TypeVar("T")


class StoreCore:
    """The state the parts of `WeaviateStore` share (its constructor is documented there)."""

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
        # How the collection holds its vectors (stitcher.store.vectors), once read or created.
        self._vectors: str | None = None
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
                is_transient=is_transient_client_error,
                policy=policy or self._retry_policy,
                rng=self._rng,
            )
        except StitcherError:
            raise
        except Exception as error:
            raise server_fault(
                classify_client_error(error), url=self.url, doing=doing, collection=self._name
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
