"""Life cycle of the local Weaviate server ("embedded default") that lives under a home directory.

Layout of a home:
    server.json   pid, ports, version, start time (ports are chosen once so the URL stays stable)
    server.lock   serialises start/stop between processes
    api-key       random API key, mode 0600 (the server refuses requests without it)
    weaviate.log  the server's stdout and stderr
    data/         PERSISTENCE_DATA_PATH

A home may instead hold a local cluster (`start(home, nodes=3)`): then server.json lists every
node under "nodes", and each node keeps its data and log under nodes/<name>/. The API key is
shared. A home holds one or the other, never both: raft remembers node names in the data.

The server binds REST to 127.0.0.1, but gRPC and the cluster data port listen on every interface
whatever the flags say, which is why API-key authentication is always on.

This module speaks REST through urllib and never imports the weaviate client (it is heavy).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from stitcher import config, provision
from stitcher.errors import ServerError

STATE_FILE = "server.json"
LOCK_FILE = "server.lock"
API_KEY_FILE = "api-key"
LOG_FILE = "weaviate.log"
DATA_DIR = "data"
#: Where the filesystem backup module writes, under the server's home.
BACKUPS_DIR = "backups"

#: Raft remembers the node name in the data directory, so it must never change for a home.
NODE_NAME = "stitcher"
API_KEY_USER = "stitcher"

#: Variables a server may inherit from the caller; anything else (LIMIT_RESOURCES, GOMEMLIMIT,
#: a stray QUERY_DEFAULTS_LIMIT, ...) could silently change how it behaves.
INHERITED_ENVIRONMENT = ("PATH", "HOME", "TMPDIR", "TZ")

LOG_ROTATE_BYTES = 20 * 1024 * 1024

#: Seconds a killed process may take to let go of its ports and to vanish from /proc.
PORT_RELEASE_GRACE = 5.0

Notice = Callable[[str], None]
ServerState = Literal["running", "degraded", "stopped", "stale"]

#: Where the nodes of a local cluster keep their data and logs: home/nodes/<name>/.
NODES_DIR = "nodes"
#: Seconds raft's timeouts are multiplied by on a local cluster. 1 (as for a lone node) makes
#: elections flap when the machine is busy; Weaviate's default of 5 makes a restart slow.
CLUSTER_RAFT_TIMEOUTS_MULTIPLIER = 2

# Popen objects of servers this process started, so stop() can reap them (no zombies in
# long-lived processes such as a test session) and no ResourceWarning fires on garbage collection.
_children: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class Ports:
    """Every port one local node needs. The raft internal RPC port is always `raft + 1`."""

    http: int
    grpc: int
    gossip: int
    data: int
    raft: int

    @property
    def raft_internal(self) -> int:
        """Weaviate derives its internal raft RPC port from RAFT_PORT; it is not configurable."""
        return self.raft + 1

    def named(self) -> dict[str, int]:
        """Port numbers by what they are for (for messages)."""
        return {
            "REST": self.http,
            "gRPC": self.grpc,
            "gossip": self.gossip,
            "cluster data": self.data,
            "raft": self.raft,
            "raft internal": self.raft_internal,
        }


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
        return _read_api_key(self.api_key_file)


@dataclass(frozen=True)
class CollectionCount:
    """A collection and its number of objects (None when it could not be counted cheaply)."""

    name: str
    objects: int | None


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
            "url": _url(self.ports.http),
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
            "url": info.url if info else (_url(ports.http) if ports else None),
            "http_port": ports.http if ports else None,
            "grpc_port": ports.grpc if ports else None,
            "pid": info.pid if info else None,
            "version": self.version,
            "data_path": str(self.home / (NODES_DIR if self.nodes else DATA_DIR)),
            "api_key_file": str(self.home / API_KEY_FILE),
            "log_file": str(self.log_file),
            "gse_dictionary_dir": str(self.gse_dictionary_dir) if self.gse_dictionary_dir else None,
            "collections": [{"name": c.name, "objects": c.objects} for c in self.collections],
            "node_count": len(self.nodes) or 1,
            "leader": self.leader,
            "nodes": [node.to_json() for node in self.nodes],
        }


def server_environment(home: Path, ports: Ports, api_key: str) -> dict[str, str]:
    """The Weaviate settings of one local node (without inherited PATH/HOME).

    Args:
        home: The server's home directory; data goes to `home/data`.
        ports: Ports the node listens on.
        api_key: The only key the server accepts.

    Returns:
        Environment variables for the weaviate-server process.
    """
    return {
        "PERSISTENCE_DATA_PATH": str(home / DATA_DIR),
        "DEFAULT_VECTORIZER_MODULE": "none",
        "API_BASED_MODULES_DISABLED": "true",
        "DISABLE_TELEMETRY": "true",
        "GO_PROFILING_DISABLE": "true",
        "ENABLE_TOKENIZER_GSE_CH": "true",
        "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "false",
        "AUTHENTICATION_APIKEY_ENABLED": "true",
        "AUTHENTICATION_APIKEY_ALLOWED_KEYS": api_key,
        "AUTHENTICATION_APIKEY_USERS": API_KEY_USER,
        "CLUSTER_HOSTNAME": NODE_NAME,
        "CLUSTER_IN_LOCALHOST": "true",
        "CLUSTER_BIND_ADDR": "127.0.0.1",
        "CLUSTER_ADVERTISE_ADDR": "127.0.0.1",
        "CLUSTER_GOSSIP_BIND_PORT": str(ports.gossip),
        "CLUSTER_DATA_BIND_PORT": str(ports.data),
        "GRPC_PORT": str(ports.grpc),
        "RAFT_PORT": str(ports.raft),
        "RAFT_INTERNAL_RPC_PORT": str(ports.raft_internal),
        "RAFT_BOOTSTRAP_EXPECT": "1",
        # The default multiplier (5) tolerates slow networks between nodes; a lone node has no
        # peers to wait for, and 1 cuts a restart's leader election from ~8 s to ~1.5 s.
        "RAFT_TIMEOUTS_MULTIPLIER": "1",
        "RAFT_JOIN": f"{NODE_NAME}:{ports.raft}",
        # `stitcher server backup|restore` (stitcher.transfer): backups go under home/backups.
        "ENABLE_MODULES": "backup-filesystem",
        "BACKUP_FILESYSTEM_PATH": str(home / BACKUPS_DIR),
    }


def cluster_node_name(index: int) -> str:
    """Name of node `index` of a local cluster (raft remembers it: never change it)."""
    return f"{NODE_NAME}-{index}"


def cluster_node_environment(
    home: Path, index: int, peers: list[Ports], api_key: str
) -> dict[str, str]:
    """The settings of node `index` of a local cluster whose nodes listen on `peers`.

    The single-node settings, with per-node data, raft bootstrapped by all nodes together
    (RAFT_JOIN names every node, RAFT_BOOTSTRAP_EXPECT their number) and gossip joined through
    node 0.
    """
    environment = server_environment(home, peers[index], api_key)
    name = cluster_node_name(index)
    environment.update(
        {
            "PERSISTENCE_DATA_PATH": str(_node_home(home, index) / DATA_DIR),
            "CLUSTER_HOSTNAME": name,
            "RAFT_BOOTSTRAP_EXPECT": str(len(peers)),
            "RAFT_JOIN": ",".join(
                f"{cluster_node_name(i)}:{ports.raft}" for i, ports in enumerate(peers)
            ),
            "RAFT_TIMEOUTS_MULTIPLIER": str(CLUSTER_RAFT_TIMEOUTS_MULTIPLIER),
        }
    )
    if index > 0:
        environment["CLUSTER_JOIN"] = f"127.0.0.1:{peers[0].gossip}"
    return environment


def server_command(binary: Path, http_port: int) -> list[str]:
    """Command line of the server: plain HTTP on loopback, long timeouts for big batches."""
    return [
        str(binary),
        "--scheme",
        "http",
        "--host",
        "127.0.0.1",
        "--port",
        str(http_port),
        "--read-timeout=600s",
        "--write-timeout=600s",
    ]


# --- public life cycle -------------------------------------------------------------------------


def start(
    home: Path | None = None,
    *,
    timeout: float = 60,
    notice: Notice | None = None,
    nodes: int | None = None,
) -> ServerInfo:
    """Start the local server under `home`, or return it when it is already running.

    Safe to call from several processes at once: exactly one server starts. Stale state (a dead
    pid, a pid that now belongs to another program, a server that stopped answering) is reported
    through `notice` and replaced, never reused silently. On a cluster, nodes that are running
    are kept and the others (re)started on their recorded ports and data.

    Args:
        home: The server's home directory (default: config.stitcher_home()).
        timeout: Seconds to wait for the server to become ready.
        notice: Called with one-line messages about stale state that was cleaned up.
        nodes: 1 for a single node, more for a local cluster (every node ready and a raft
            leader elected before this returns); default: what the home already holds, else 1.

    Returns:
        The running server.

    Raises:
        ServerError: The binary is missing, a recorded port is taken by another process, or the
            server did not become ready (the message quotes the end of its log).
    """
    home = _resolve_home(home)
    say = notice or (lambda _message: None)
    if nodes is not None and nodes < 1:
        raise ServerError(f"--nodes must be at least 1, not {nodes}")
    with _locked(home, timeout + 30):
        state = _read_state(home)
        wanted = _node_count_to_start(home, state, nodes)
        if wanted > 1:
            return _start_cluster_locked(home, state, wanted, timeout, say)
        ports = _ports_from_state(state)
        pid = state.get("pid")
        if isinstance(pid, int) and ports is not None:
            running = _adopt_recorded(home, state, pid, ports, timeout, say)
            if running is not None:
                return running
        return _start_locked(home, ports, timeout)


def ensure_running(
    home: Path | None = None, notice: Notice | None = None, *, timeout: float = 60
) -> ServerInfo:
    """Return the local server under `home`, starting it first when it is not running.

    Args:
        home: The server's home directory (default: config.stitcher_home()).
        notice: Called with one-line messages about stale state that was cleaned up.
        timeout: Seconds to wait for a fresh server to become ready.

    Returns:
        The running server.

    Raises:
        ServerError: As for `start`.
    """
    home = _resolve_home(home)
    # Lock-free fast path: most calls find the server up and should not queue behind a start.
    state = _read_state(home)
    if _is_cluster_state(state):
        running = _running_cluster_entry(home, state, notice or (lambda _message: None))
        return running or start(home, timeout=timeout, notice=notice)
    ports = _ports_from_state(state)
    pid = state.get("pid")
    if isinstance(pid, int) and ports is not None and _is_our_server(pid, ports.http):
        key_file = home / API_KEY_FILE
        if key_file.is_file():
            version = _healthy_version(ports.http, _read_api_key(key_file))
            if version is not None:
                return _info(home, ports, pid, version)
    return start(home, timeout=timeout, notice=notice)


def stop(home: Path | None = None, timeout: float = 30) -> bool:
    """Stop the local server under `home`: SIGTERM, then SIGKILL after `timeout` seconds.

    Args:
        home: The server's home directory (default: config.stitcher_home()).
        timeout: Seconds to wait for a clean shutdown before killing.

    Returns:
        True when a server was running and has stopped, False when nothing was running.
    """
    home = _resolve_home(home)
    with _locked(home, timeout + 90):
        state = _read_state(home)
        if _is_cluster_state(state):
            return _stop_cluster_locked(home, state, timeout)
        ports = _ports_from_state(state)
        pid = state.get("pid")
        if not isinstance(pid, int):
            return False
        stopped = False
        if ports is not None and _is_our_server(pid, ports.http):
            _terminate(pid, timeout)
            stopped = True
        _write_state(home, {**state, "pid": None})
        return stopped


def status(home: Path | None = None) -> ServerStatus:
    """Describe the local server under `home` without changing anything.

    Returns:
        state "running" (answering with its key), "stopped" (nothing recorded or cleanly
        stopped) or "stale" (a pid is recorded but its process is gone, is another program, or
        does not answer); with version and per-collection object counts when running. For a
        cluster, every node's state, and "degraded" when some but not all nodes are running.
    """
    home = _resolve_home(home)
    log_file = home / LOG_FILE
    gse = provision.gse_dictionary_dir()
    state = _read_state(home)
    if _is_cluster_state(state):
        return _cluster_status(home, state, gse)
    ports = _ports_from_state(state)
    pid = state.get("pid")
    if not isinstance(pid, int) or ports is None:
        return ServerStatus(
            "stopped", home, log_file, gse_dictionary_dir=gse, ports=ports, detail="not running"
        )
    _settle(pid)
    if not _pid_alive(pid):
        detail = f"pid {pid} in {home / STATE_FILE} is not running (crashed or killed?)"
        return ServerStatus(
            "stale", home, log_file, gse_dictionary_dir=gse, ports=ports, detail=detail
        )
    if not _is_our_server(pid, ports.http):
        detail = f"pid {pid} in {home / STATE_FILE} now belongs to another program"
        return ServerStatus(
            "stale", home, log_file, gse_dictionary_dir=gse, ports=ports, detail=detail
        )
    key_file = home / API_KEY_FILE
    api_key = _read_api_key(key_file) if key_file.is_file() else ""
    version = _healthy_version(ports.http, api_key)
    if version is None:
        detail = f"Weaviate (pid {pid}) does not answer at {_url(ports.http)}"
        return ServerStatus(
            "stale", home, log_file, gse_dictionary_dir=gse, ports=ports, detail=detail
        )
    info = _info(home, ports, pid, version)
    return ServerStatus(
        "running",
        home,
        log_file,
        info=info,
        version=version,
        collections=_collection_counts(ports.http, api_key),
        gse_dictionary_dir=gse,
        ports=ports,
        detail=f"running at {info.url} (pid {pid})",
    )


def log_tail(home: Path | None = None, lines: int = 20) -> list[str]:
    """The last `lines` lines of the server log under `home` (empty when there is no log)."""
    return _tail(_resolve_home(home) / LOG_FILE, lines)


# --- starting ----------------------------------------------------------------------------------


def _adopt_recorded(
    home: Path, state: dict[str, Any], pid: int, ports: Ports, timeout: float, say: Notice
) -> ServerInfo | None:
    """Return the recorded server when it is ours and healthy; report and clear it otherwise."""
    state_file = home / STATE_FILE
    _settle(pid)
    if not _pid_alive(pid):
        say(
            f"Weaviate (pid {pid}) recorded in {state_file} is no longer running "
            f"(crashed or killed; see {home / LOG_FILE}); starting a new one"
        )
    elif not _is_our_server(pid, ports.http):
        say(
            f"pid {pid} recorded in {state_file} now belongs to another program; "
            "leaving it alone and starting a new Weaviate"
        )
    else:
        api_key = _read_api_key(home / API_KEY_FILE)
        # It may still be loading its data (a start that another process began); give it time.
        version = _wait_until_ready(ports.http, api_key, timeout, alive=lambda: _pid_alive(pid))
        if version is not None:
            expected = config.WEAVIATE_VERSION
            if version != expected and config.weaviate_binary_override() is None:
                say(
                    f"the running server is Weaviate {version}, this stitcher pins {expected}: "
                    "restart it (`stitcher server stop`, then `stitcher server start`) to switch"
                )
            return _info(home, ports, pid, version)
        say(
            f"Weaviate (pid {pid}) under {home} did not answer within {timeout:g} s; "
            "stopping it and starting a new one"
        )
        _terminate(pid, 30)
    _write_state(home, {**state, "pid": None})
    return None


def _start_locked(home: Path, ports: Ports | None, timeout: float) -> ServerInfo:
    binary = provision.binary_path()
    if not binary.is_file():
        raise ServerError(
            f"Weaviate server binary not found at {binary}: run `stitcher server install` "
            "(or set WEAVIATE_URL to a running server)"
        )
    state_file = home / STATE_FILE
    if ports is None:
        ports = _choose_free_ports()
    else:
        for purpose, port in _taken_ports(ports).items():
            raise ServerError(
                f"Port {port} ({purpose}), recorded in {state_file}, is in use by another "
                f"process: stop that process, or delete {state_file} to pick new ports "
                "(the server URL will change)"
            )
    api_key = _ensure_api_key(home / API_KEY_FILE)
    (home / DATA_DIR).mkdir(exist_ok=True)
    environment = {name: os.environ[name] for name in INHERITED_ENVIRONMENT if name in os.environ}
    environment.update(server_environment(home, ports, api_key))
    log_file = home / LOG_FILE
    process = _spawn(binary, ports.http, home, environment, log_file)
    _write_state(
        home,
        {
            **_ports_to_state(ports),
            "pid": process.pid,
            "version": config.WEAVIATE_VERSION,
            "started_at": _now(),
        },
    )
    version = _wait_until_ready(ports.http, api_key, timeout, alive=lambda: process.poll() is None)
    if version is None:
        exited = process.poll() is not None
        if not exited:
            _terminate(process.pid, 10)
        _write_state(home, {**_read_state(home), "pid": None})
        what = "exited during start" if exited else f"was not ready within {timeout:g} s"
        last_lines = " | ".join(_readable(line) for line in _tail(log_file, 5)) or "(empty log)"
        raise ServerError(f"Weaviate {what}; see {log_file}. Last log lines: {last_lines}")
    _write_state(home, {**_read_state(home), "version": version})
    return _info(home, ports, process.pid, version)


def _spawn(
    binary: Path, http_port: int, cwd: Path, environment: dict[str, str], log_file: Path
) -> subprocess.Popen[bytes]:
    """Run one weaviate-server in its own session, appending its output to `log_file`.

    The API key travels in the environment only, never on the command line (`ps` shows that).
    """
    _rotate_log(log_file)
    with log_file.open("ab") as log:
        log.write(f"\n--- stitcher: starting {binary} at {_now()} ---\n".encode())
        log.flush()
        try:
            process = subprocess.Popen(
                server_command(binary, http_port),
                cwd=cwd,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as error:
            raise ServerError(f"Could not run {binary}: {error.strerror}") from None
    _children[process.pid] = process
    return process


def _wait_until_ready(
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
        version = _healthy_version(http_port, api_key)
        if version is not None:
            return version
        if time.monotonic() >= deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


def _healthy_version(http_port: int, api_key: str) -> str | None:
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


def _collection_counts(http_port: int, api_key: str) -> tuple[CollectionCount, ...]:
    code, schema = _http_get(http_port, "/v1/schema", api_key)
    if code != 200 or not isinstance(schema, dict):
        return ()
    names: list[str] = []
    countable: list[str] = []
    for collection in schema.get("classes") or []:
        name = collection.get("class")
        if not isinstance(name, str):
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


# --- a local cluster ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Node:
    """One node of a local cluster as server.json records it."""

    index: int
    ports: Ports
    pid: int | None

    @property
    def name(self) -> str:
        return cluster_node_name(self.index)


def _is_cluster_state(state: dict[str, Any]) -> bool:
    return isinstance(state.get("nodes"), list)


def _nodes_from_state(state: dict[str, Any]) -> list[_Node]:
    found = []
    for index, entry in enumerate(state.get("nodes") or []):
        ports = _ports_from_state(entry) if isinstance(entry, dict) else None
        if ports is None:
            raise ServerError(
                f"node {index} in server.json has no ports: stop the cluster, delete server.json "
                "and start it again"
            )
        pid = entry.get("pid")
        found.append(_Node(index, ports, pid if isinstance(pid, int) else None))
    return found


def _nodes_to_state(nodes: list[_Node], versions: dict[int, str] | None = None) -> dict[str, Any]:
    entries = []
    for node in nodes:
        entry: dict[str, Any] = {"name": node.name, **_ports_to_state(node.ports), "pid": node.pid}
        if versions and node.index in versions:
            entry["version"] = versions[node.index]
        entries.append(entry)
    return {"nodes": entries, "started_at": _now()}


def _node_home(home: Path, index: int) -> Path:
    return home / NODES_DIR / cluster_node_name(index)


def _node_count_to_start(home: Path, state: dict[str, Any], nodes: int | None) -> int:
    """How many nodes `start` brings up; refuses to turn one layout into the other."""
    if _is_cluster_state(state):
        recorded = len(state["nodes"])
        if nodes is not None and nodes != recorded:
            raise ServerError(
                f"{home} holds a {recorded}-node cluster; a cluster cannot grow or shrink here. "
                f"Start it with --nodes {recorded}, or use another STITCHER_HOME"
            )
        return recorded
    wanted = nodes or 1
    if wanted > 1:
        pid = state.get("pid")
        single_ports = _ports_from_state(state)
        if isinstance(pid, int) and single_ports and _is_our_server(pid, single_ports.http):
            raise ServerError(
                f"a single-node server is running under {home}: stop it first (`stitcher server "
                "stop`), and start the cluster under another STITCHER_HOME"
            )
        if (home / DATA_DIR).is_dir() and any((home / DATA_DIR).iterdir()):
            raise ServerError(
                f"{home} holds the data of a single-node server ({home / DATA_DIR}), which "
                "cannot become a cluster node: start the cluster under another STITCHER_HOME"
            )
    elif (home / NODES_DIR).is_dir() and any((home / NODES_DIR).iterdir()):
        raise ServerError(
            f"{home} holds the data of a local cluster ({home / NODES_DIR}): start it with "
            "--nodes N, or use another STITCHER_HOME for a single node"
        )
    return wanted


def _start_cluster_locked(
    home: Path, state: dict[str, Any], count: int, timeout: float, say: Notice
) -> ServerInfo:
    binary = provision.binary_path()
    if not binary.is_file():
        raise ServerError(
            f"Weaviate server binary not found at {binary}: run `stitcher server install`"
        )
    nodes = _nodes_from_state(state) if _is_cluster_state(state) else []
    if not nodes:
        taken: set[int] = set()
        nodes = [_Node(index, _choose_free_ports(taken), None) for index in range(count)]
    api_key = _ensure_api_key(home / API_KEY_FILE)
    peers = [node.ports for node in nodes]
    processes: dict[int, Callable[[], bool]] = {}
    for position, node in enumerate(nodes):
        if node.pid is not None:
            _settle(node.pid)
            if _is_our_server(node.pid, node.ports.http):
                pid = node.pid
                processes[node.index] = lambda pid=pid: _pid_alive(pid)  # type: ignore[misc]
                continue
            say(f"node {node.name} (pid {node.pid}) is not running; starting it again")
        for purpose, port in _taken_ports(node.ports).items():
            raise ServerError(
                f"Port {port} ({purpose} of node {node.name}), recorded in {home / STATE_FILE}, "
                "is in use by another process: stop that process, or stop the cluster and "
                "delete server.json to pick new ports"
            )
        node_home = _node_home(home, node.index)
        (node_home / DATA_DIR).mkdir(parents=True, exist_ok=True)
        environment = {
            name: os.environ[name] for name in INHERITED_ENVIRONMENT if name in os.environ
        }
        environment.update(cluster_node_environment(home, node.index, peers, api_key))
        process = _spawn(binary, node.ports.http, node_home, environment, node_home / LOG_FILE)
        nodes[position] = _Node(node.index, node.ports, process.pid)
        processes[node.index] = lambda process=process: process.poll() is None  # type: ignore[misc]
        # Recorded at once, so a failed start still lets `server stop` find every process.
        _write_state(home, _nodes_to_state(nodes))
    versions = _wait_until_cluster_ready(nodes, api_key, timeout, processes)
    if versions is None:
        down = [n.name for n in nodes if not processes[n.index]()]
        tails = " | ".join(
            _readable(line)
            for n in nodes
            for line in _tail(_node_home(home, n.index) / LOG_FILE, 2)
        )
        what = f"nodes {', '.join(down)} exited" if down else f"not ready within {timeout:g} s"
        _stop_cluster_locked(home, _nodes_to_state(nodes), 10)
        raise ServerError(
            f"the local cluster did not start ({what}); see {home / NODES_DIR}/*/{LOG_FILE}. "
            f"Last log lines: {tails or '(empty logs)'}"
        )
    _write_state(home, _nodes_to_state(nodes, versions))
    entry = nodes[0]
    assert entry.pid is not None
    return _cluster_info(home, entry, versions[0], len(nodes))


def _wait_until_cluster_ready(
    nodes: list[_Node], api_key: str, timeout: float, alive: dict[int, Callable[[], bool]]
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
        versions = {node.index: _healthy_version(node.ports.http, api_key) for node in nodes}
        if all(versions.values()) and _leader(nodes[0].ports.http, api_key, len(nodes)):
            return {index: str(version) for index, version in versions.items()}
        if time.monotonic() >= deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


def _leader(http_port: int, api_key: str, expected: int) -> str | None:
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


def _running_cluster_entry(home: Path, state: dict[str, Any], say: Notice) -> ServerInfo | None:
    """Node 0 of a running cluster (lock-free); notices name the nodes that are down.

    A cluster with a node down still serves (that is what replication is for), so it is used
    as it is; `stitcher server start` brings the missing nodes back.
    """
    nodes = _nodes_from_state(state)
    entry = nodes[0]
    key_file = home / API_KEY_FILE
    if entry.pid is None or not _is_our_server(entry.pid, entry.ports.http):
        return None
    if not key_file.is_file():
        return None
    version = _healthy_version(entry.ports.http, _read_api_key(key_file))
    if version is None:
        return None
    down = [n.name for n in nodes[1:] if n.pid is None or not _is_our_server(n.pid, n.ports.http)]
    if down:
        say(
            f"local cluster: {', '.join(down)} not running (reads and writes go on with the "
            "others); `stitcher server start` restarts it"
        )
    return _cluster_info(home, entry, version, len(nodes))


def _stop_cluster_locked(home: Path, state: dict[str, Any], timeout: float) -> bool:
    nodes = _nodes_from_state(state)
    ours = [n for n in nodes if n.pid is not None and _is_our_server(n.pid, n.ports.http)]
    # SIGTERM to all first: the nodes shut down side by side instead of one after the other.
    for node in ours:
        assert node.pid is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(node.pid, signal.SIGTERM)
    for node in ours:
        assert node.pid is not None
        _terminate(node.pid, timeout)
    _write_state(home, {**state, "nodes": [{**e, "pid": None} for e in state["nodes"]]})
    return bool(ours)


def _cluster_status(home: Path, state: dict[str, Any], gse: Path | None) -> ServerStatus:
    nodes = _nodes_from_state(state)
    key_file = home / API_KEY_FILE
    api_key = _read_api_key(key_file) if key_file.is_file() else ""
    found: list[NodeStatus] = []
    for node in nodes:
        version = None
        if node.pid is None:
            detail = "not running"
        else:
            _settle(node.pid)
            if not _pid_alive(node.pid):
                detail = f"pid {node.pid} is not running (crashed or killed?)"
            elif not _is_our_server(node.pid, node.ports.http):
                detail = f"pid {node.pid} now belongs to another program"
            else:
                version = _healthy_version(node.ports.http, api_key)
                detail = "ready" if version else f"does not answer at {_url(node.ports.http)}"
        found.append(
            NodeStatus(node.name, node.pid, node.ports, version is not None, version, detail)
        )
    entry = nodes[0]
    log_file = _node_home(home, 0) / LOG_FILE
    ready = [n for n in found if n.ready]
    answering = next((nodes[i] for i, n in enumerate(found) if n.ready), None)
    leader = _leader(answering.ports.http, api_key, 1) if answering else None
    if not ready:
        recorded = any(n.pid is not None for n in nodes)
        return ServerStatus(
            "stale" if recorded else "stopped",
            home,
            log_file,
            gse_dictionary_dir=gse,
            ports=entry.ports,
            detail="no node answers" if recorded else "not running",
            nodes=tuple(found),
        )
    assert answering is not None and answering.pid is not None
    version = str(found[answering.index].version)
    complete = len(ready) == len(found) and leader is not None
    detail = f"{len(ready)} of {len(found)} nodes ready, raft leader {leader or 'none'}"
    return ServerStatus(
        "running" if complete else "degraded",
        home,
        log_file,
        info=_cluster_info(home, answering, version, len(nodes)),
        version=version,
        collections=_collection_counts(answering.ports.http, api_key),
        gse_dictionary_dir=gse,
        ports=answering.ports,
        detail=detail,
        nodes=tuple(found),
        leader=leader,
    )


def _cluster_info(home: Path, node: _Node, version: str, count: int) -> ServerInfo:
    assert node.pid is not None
    node_home = _node_home(home, node.index)
    return ServerInfo(
        home=home,
        url=_url(node.ports.http),
        http_port=node.ports.http,
        grpc_port=node.ports.grpc,
        pid=node.pid,
        version=version,
        data_path=node_home / DATA_DIR,
        api_key_file=home / API_KEY_FILE,
        log_file=node_home / LOG_FILE,
        node_count=count,
    )


# --- processes ---------------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    _reap(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    # A zombie still "exists" for kill(0) but is gone for every purpose that matters here.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            return False
    return True


def _settle(pid: int) -> None:
    """Wait for a process that is exiting to finish.

    While the kernel tears a process down its command line is already empty, so it would look
    like "another program" instead of the dead weaviate it is about to be.
    """
    deadline = time.monotonic() + PORT_RELEASE_GRACE
    while _pid_alive(pid) and _command_line(pid) == [] and time.monotonic() < deadline:
        time.sleep(0.05)


def _reap(pid: int) -> None:
    process = _children.get(pid)
    if process is not None and process.poll() is not None:
        del _children[pid]


def _command_line(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return [part.decode(errors="replace") for part in raw.split(b"\0") if part]
    except FileNotFoundError:
        if Path("/proc/self").exists():
            return None
    except OSError:
        return None
    # No procfs (macOS): ask ps.
    try:
        completed = subprocess.run(
            ["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return completed.stdout.split() or None


def _is_our_server(pid: int, http_port: int) -> bool:
    """Whether `pid` is a weaviate-server serving REST on `http_port` (not a recycled pid)."""
    if not _pid_alive(pid):
        return False
    argv = _command_line(pid)
    if not argv or "weaviate" not in Path(argv[0]).name:
        return False
    return any(
        argv[index] == "--port" and argv[index + 1] == str(http_port)
        for index in range(len(argv) - 1)
    )


def _terminate(pid: int, timeout: float) -> None:
    """SIGTERM, wait, SIGKILL; returns once the process is gone."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _pid_alive(pid):
                return
            time.sleep(0.05)
    if _pid_alive(pid):
        raise ServerError(f"Weaviate (pid {pid}) did not stop even after SIGKILL")


# --- ports -------------------------------------------------------------------------------------


def _port_is_free(port: int) -> bool:
    # gRPC and the data port listen on every interface, so test the wildcard address too.
    for host in ("127.0.0.1", "0.0.0.0"):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as error:
                if error.errno in (errno.EADDRINUSE, errno.EACCES):
                    return False
                raise
    return True


def _taken_ports(ports: Ports) -> dict[str, int]:
    """Recorded ports still in use after PORT_RELEASE_GRACE seconds (a killed server frees them
    only once it has fully exited, a moment after its pid stops looking like weaviate)."""
    deadline = time.monotonic() + PORT_RELEASE_GRACE
    while True:
        taken = {name: port for name, port in ports.named().items() if not _port_is_free(port)}
        if not taken or time.monotonic() >= deadline:
            return taken
        time.sleep(0.1)


def _choose_free_ports(taken: set[int] | None = None) -> Ports:
    """Free ports for one node; `taken` (updated) keeps the nodes of a cluster apart."""
    taken = set() if taken is None else taken

    def pick(needs_next: bool = False) -> int:
        for _attempt in range(200):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.bind(("127.0.0.1", 0))
                port = int(probe.getsockname()[1])
            candidates = [port, port + 1] if needs_next else [port]
            if taken.isdisjoint(candidates) and all(
                p < 65536 and _port_is_free(p) for p in candidates
            ):
                taken.update(candidates)
                return port
        raise ServerError("Could not find free ports on 127.0.0.1 for the local Weaviate")

    return Ports(http=pick(), grpc=pick(), gossip=pick(), data=pick(), raft=pick(needs_next=True))


# --- files -------------------------------------------------------------------------------------


def _resolve_home(home: Path | None) -> Path:
    resolved = Path(home).expanduser() if home is not None else config.stitcher_home()
    resolved = resolved.absolute()
    resolved.mkdir(parents=True, exist_ok=True)
    return resolved


@contextlib.contextmanager
def _locked(home: Path, timeout: float) -> Iterator[None]:
    from filelock import FileLock, Timeout

    lock = FileLock(str(home / LOCK_FILE), timeout=timeout)
    try:
        with lock:
            yield
    except Timeout:
        raise ServerError(
            f"Another stitcher process holds {home / LOCK_FILE} (starting or stopping the "
            "server); wait for it and retry"
        ) from None


def _read_state(home: Path) -> dict[str, Any]:
    try:
        loaded = json.loads((home / STATE_FILE).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise ServerError(
            f"{home / STATE_FILE} is unreadable ({error}): delete it and start again"
        ) from None
    return loaded if isinstance(loaded, dict) else {}


def _write_state(home: Path, state: dict[str, Any]) -> None:
    target = home / STATE_FILE
    staging = target.with_suffix(".json.tmp")
    staging.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    os.replace(staging, target)


_PORT_FIELDS = {
    "http": "http_port",
    "grpc": "grpc_port",
    "gossip": "gossip_port",
    "data": "data_port",
    "raft": "raft_port",
}


def _ports_from_state(state: dict[str, Any]) -> Ports | None:
    values = {attr: state.get(key) for attr, key in _PORT_FIELDS.items()}
    if not all(isinstance(value, int) for value in values.values()):
        return None
    return Ports(**values)  # type: ignore[arg-type]


def _ports_to_state(ports: Ports) -> dict[str, int]:
    return {key: getattr(ports, attr) for attr, key in _PORT_FIELDS.items()}


def _ensure_api_key(key_file: Path) -> str:
    if key_file.is_file():
        return _read_api_key(key_file)
    key = secrets.token_urlsafe(32)
    # Created 0600 from the first byte on: no window where another user could read it.
    descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(key + "\n")
    return key


def _read_api_key(key_file: Path) -> str:
    try:
        key = key_file.read_text().strip()
    except OSError as error:
        raise ServerError(f"Cannot read the API key file {key_file}: {error.strerror}") from None
    if not key:
        raise ServerError(f"The API key file {key_file} is empty: delete it and restart the server")
    return key


def _tail(path: Path, lines: int) -> list[str]:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            text = handle.read().decode(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-lines:]


def _readable(log_line: str) -> str:
    """Weaviate logs JSON lines; keep the level, message and error of one, drop the build noise."""
    try:
        entry = json.loads(log_line)
    except ValueError:
        return log_line.strip()
    if not isinstance(entry, dict) or "msg" not in entry:
        return log_line.strip()
    text = f"{entry.get('level', 'info')}: {entry['msg']}"
    if entry.get("error"):
        text += f" ({entry['error']})"
    return text


def _rotate_log(log_file: Path) -> None:
    # The log is appended to across restarts; keep one previous generation once it gets big.
    with contextlib.suppress(OSError):
        if log_file.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(log_file, log_file.with_name(log_file.name + ".1"))


def _info(home: Path, ports: Ports, pid: int, version: str) -> ServerInfo:
    return ServerInfo(
        home=home,
        url=_url(ports.http),
        http_port=ports.http,
        grpc_port=ports.grpc,
        pid=pid,
        version=version,
        data_path=home / DATA_DIR,
        api_key_file=home / API_KEY_FILE,
        log_file=home / LOG_FILE,
    )


def _url(http_port: int) -> str:
    return f"http://127.0.0.1:{http_port}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- HTTP --------------------------------------------------------------------------------------


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
    request = urllib.request.Request(_url(http_port) + path, data=data, headers=headers)
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
