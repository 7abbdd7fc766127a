"""What the life cycle hands back: a running server, and the status of a home and its nodes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stitcher.bookkeeping import BOOKKEEPING_COLLECTIONS
from stitcher.server.files import (
    API_KEY_FILE,
    BACKUPS_DIR,
    DATA_DIR,
    LOG_FILE,
    NODES_DIR,
    Ports,
    RecordedNode,
    cluster_node_name,
    local_url,
    node_directory,
    read_api_key,
)
from stitcher.server.readiness import CollectionCount

Notice = Callable[[str], None]

ServerState = Literal["running", "degraded", "stopped", "stale"]


@dataclass(frozen=True)
class ServerInfo:
    """A running local server. The API key itself is not a field, so it never shows in a repr."""

    home: Path
    url: str
    http_port: int
    grpc_port: int
    pid: int
    version: str
    data_path: Path
    api_key_file: Path
    log_file: Path
    #: Nodes of the local deployment; url and ports above are those of node 0, the entry node.
    node_count: int = 1

    def api_key(self) -> str:
        """The server's API key, read from `api_key_file`."""
        return read_api_key(self.api_key_file)


@dataclass(frozen=True)
class NodeStatus:
    """One node of a local deployment as `status()` found it."""

    name: str
    pid: int | None
    ports: Ports
    ready: bool
    version: str | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary of the node."""
        return {
            "name": self.name,
            "pid": self.pid,
            "url": local_url(self.ports.http),
            "http_port": self.ports.http,
            "grpc_port": self.ports.grpc,
            "gossip_port": self.ports.gossip,
            "data_port": self.ports.data,
            "raft_port": self.ports.raft,
            "ready": self.ready,
            "version": self.version,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class ServerStatus:
    """What `status()` found under a home."""

    state: ServerState
    home: Path
    log_file: Path
    info: ServerInfo | None = None
    version: str | None = None
    collections: tuple[CollectionCount, ...] = ()
    gse_dictionary_dir: Path | None = None
    detail: str = ""
    ports: Ports | None = field(default=None, repr=False)
    #: Every node of a cluster (empty for a single node, whose fields are the ones above).
    nodes: tuple[NodeStatus, ...] = ()
    #: The raft leader's node name, when a cluster has one.
    leader: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary (paths as strings; the API key's path, never the key)."""
        info = self.info
        ports = self.ports
        return {
            "state": self.state,
            "detail": self.detail,
            "home": str(self.home),
            "url": info.url if info else (local_url(ports.http) if ports else None),
            "http_port": ports.http if ports else None,
            "grpc_port": ports.grpc if ports else None,
            "pid": info.pid if info else None,
            "version": self.version,
            "data_path": str(self.home / (NODES_DIR if self.nodes else DATA_DIR)),
            "api_key_file": str(self.home / API_KEY_FILE),
            "log_file": str(self.log_file),
            "gse_dictionary_dir": str(self.gse_dictionary_dir) if self.gse_dictionary_dir else None,
            "collections": [{"name": c.name, "objects": c.objects} for c in self.collections],
            # Read from the data directory while the server is not running (None when it is).
            "collections_on_disk": (
                None if self.state == "running" else list(collections_on_disk(self.data_dir()))
            ),
            "node_count": len(self.nodes) or 1,
            "leader": self.leader,
            "nodes": [node.to_json() for node in self.nodes],
        }

    def data_dir(self) -> Path:
        """Where the entry node keeps its collections (node 0's data of a local cluster)."""
        if self.nodes:
            return self.home / NODES_DIR / cluster_node_name(0) / DATA_DIR
        return self.home / DATA_DIR


#: What a Weaviate data directory holds besides one folder per collection.
_NOT_COLLECTIONS = frozenset({"raft", BACKUPS_DIR, "lost+found"})


def collections_on_disk(data_dir: Path) -> tuple[str, ...]:
    """The user's collections a stopped server keeps in `data_dir`: Weaviate gives each its own
    folder, named after the collection in lower case (so "MyDocs" shows as "mydocs"); the
    schema itself sits in raft's log, which only the server reads."""
    hidden = {name.lower() for name in BOOKKEEPING_COLLECTIONS} | _NOT_COLLECTIONS
    try:
        entries = list(data_dir.iterdir())
    except OSError:
        return ()
    return tuple(
        sorted(e.name for e in entries if e.is_dir() and e.name not in hidden and e.name[0] != ".")
    )


def single_node_info(home: Path, ports: Ports, pid: int, version: str) -> ServerInfo:
    return ServerInfo(
        home=home,
        url=local_url(ports.http),
        http_port=ports.http,
        grpc_port=ports.grpc,
        pid=pid,
        version=version,
        data_path=home / DATA_DIR,
        api_key_file=home / API_KEY_FILE,
        log_file=home / LOG_FILE,
    )


def cluster_node_info(home: Path, node: RecordedNode, version: str, count: int) -> ServerInfo:
    assert node.pid is not None
    node_home = node_directory(home, node.index)
    return ServerInfo(
        home=home,
        url=local_url(node.ports.http),
        http_port=node.ports.http,
        grpc_port=node.ports.grpc,
        pid=node.pid,
        version=version,
        data_path=node_home / DATA_DIR,
        api_key_file=home / API_KEY_FILE,
        log_file=node_home / LOG_FILE,
        node_count=count,
    )
