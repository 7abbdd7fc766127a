"""Replicas: the factor a new collection gets on this cluster, the check that a requested factor
can be honoured, and which nodes hold each shard.
"""

from __future__ import annotations

from typing import Any

from stitcher.errors import SettingsMismatch, UsageError, setting
from stitcher.store.weaviate.core import StoreCore
from stitcher.store.weaviate.schema import DEFAULT_CLUSTER_REPLICATION


class Replication(StoreCore):
    """How the collection is replicated over the cluster's nodes."""

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
