"""Whether a local server is ready: REST through urllib (never the heavy weaviate client),
health, raft leader, and the object counts `status` shows.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stitcher.bookkeeping import BOOKKEEPING_COLLECTIONS
from stitcher.server.files import RecordedNode, local_url


@dataclass(frozen=True)
class CollectionCount:
    """A collection and its number of objects (None when it could not be counted cheaply)."""

    name: str
    objects: int | None


def wait_until_ready(
    http_port: int, api_key: str, timeout: float, alive: Callable[[], bool]
) -> str | None:
    """Poll until the server is ready and can serve the schema (a raft leader exists).

    Returns:
        The server's version, or None when it exited or the time ran out.
    """
    deadline = time.monotonic() + timeout
    delay = 0.1
    while True:
        if not alive():
            return None
        version = healthy_version(http_port, api_key)
        if version is not None:
            return version
        if time.monotonic() >= deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


def healthy_version(http_port: int, api_key: str) -> str | None:
    """The version when the server is ready, has a leader, and accepts the key; else None."""
    if _http_get(http_port, "/v1/.well-known/ready", None)[0] != 200:
        return None
    # /ready answers before raft has a leader; schema reads fail until then ("leader not found").
    if _http_get(http_port, "/v1/schema", api_key)[0] != 200:
        return None
    code, meta = _http_get(http_port, "/v1/meta", api_key)
    if code != 200 or not isinstance(meta, dict):
        return None
    return str(meta.get("version", "unknown"))


def collection_counts(http_port: int, api_key: str) -> tuple[CollectionCount, ...]:
    """The user's collections and their object counts; stitcher's own bookkeeping collections
    (leases, the source registry) are not among them."""
    code, schema = _http_get(http_port, "/v1/schema", api_key)
    if code != 200 or not isinstance(schema, dict):
        return ()
    names: list[str] = []
    countable: list[str] = []
    for collection in schema.get("classes") or []:
        name = collection.get("class")
        if not isinstance(name, str) or name in BOOKKEEPING_COLLECTIONS:
            continue
        names.append(name)
        # Multi-tenant collections can only be counted per tenant; not worth it for a status line.
        if not (collection.get("multiTenancyConfig") or {}).get("enabled"):
            countable.append(name)
    counts: dict[str, int] = {}
    if countable:
        # One GraphQL request counts every collection.
        fields = " ".join(f"{name} {{ meta {{ count }} }}" for name in countable)
        code, answer = _http_post(
            http_port, "/v1/graphql", api_key, {"query": f"{{ Aggregate {{ {fields} }} }}"}
        )
        aggregate = ((answer or {}).get("data") or {}).get("Aggregate") or {}
        if code == 200 and isinstance(aggregate, dict):
            for name in countable:
                rows = aggregate.get(name) or []
                if rows and isinstance(rows[0], dict):
                    count = (rows[0].get("meta") or {}).get("count")
                    if isinstance(count, int):
                        counts[name] = count
    return tuple(CollectionCount(name, counts.get(name)) for name in sorted(names))


def wait_until_cluster_ready(
    nodes: list[RecordedNode], api_key: str, timeout: float, alive: dict[int, Callable[[], bool]]
) -> dict[int, str] | None:
    """Poll until every node is ready and serves the schema and raft has a leader.

    Returns:
        Each node's version by index, or None when a node exited or the time ran out.
    """
    deadline = time.monotonic() + timeout
    delay = 0.2
    while True:
        if not all(alive[node.index]() for node in nodes):
            return None
        versions = {node.index: healthy_version(node.ports.http, api_key) for node in nodes}
        if all(versions.values()) and raft_leader(nodes[0].ports.http, api_key, len(nodes)):
            return {index: str(version) for index, version in versions.items()}
        if time.monotonic() >= deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


def raft_leader(http_port: int, api_key: str, expected: int) -> str | None:
    """The raft leader's name when `expected` nodes report one and the same leader, else None.

    /v1/.well-known/ready answers before a leader exists; schema calls fail until there is one.
    """
    code, answer = _http_get(http_port, "/v1/cluster/statistics", api_key)
    if code != 200 or not isinstance(answer, dict):
        return None
    statistics = answer.get("statistics") or []
    leaders = {str(entry.get("leaderId") or "") for entry in statistics if isinstance(entry, dict)}
    if len(statistics) < expected or len(leaders) != 1 or "" in leaders:
        return None
    return leaders.pop()


def internal_api_is_closed(data_port: int) -> bool | None:
    """Whether a node's internal API (CLUSTER_DATA_BIND_PORT) refuses a request without its
    basic-auth pair; None when nothing answers on the port.

    It listens on every interface, so this is what stands between the network and the data.
    The probe asks for an index listing, which an open port answers and a closed one refuses
    with 401 before looking at the path.
    """
    code, _ = _http_get(data_port, "/indices/", None)
    if code is None:
        return None
    return code == 401


def _http_get(http_port: int, path: str, api_key: str | None) -> tuple[int | None, Any]:
    return _http(http_port, path, api_key, None)


def _http_post(http_port: int, path: str, api_key: str | None, body: Any) -> tuple[int | None, Any]:
    return _http(http_port, path, api_key, body)


def _http(
    http_port: int, path: str, api_key: str | None, body: Any, timeout: float = 5
) -> tuple[int | None, Any]:
    """(status, decoded JSON or None); status None when nothing answered."""
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(local_url(http_port) + path, data=data, headers=headers)
    # Never use a proxy for loopback, whatever HTTP_PROXY says.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=timeout) as response:
            payload = response.read()
            code = int(response.status)
    except urllib.error.HTTPError as error:
        return error.code, None
    except (OSError, ValueError):
        return None, None
    try:
        return code, json.loads(payload) if payload else None
    except ValueError:
        return code, None
