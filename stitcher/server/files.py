"""The files a local server keeps under its home: layout, server.json, the API key, logs.

Layout of a home:
    server.json   pid, ports, version, start time (ports are chosen once so the URL stays stable)
    server.lock   serialises start/stop between processes
    api-key       random API key, mode 0600 (the server refuses requests without it)
    cluster-auth  random password of the nodes' internal API, mode 0600 (see below)
    weaviate.log  the server's stdout and stderr, mode 0600
    data/         PERSISTENCE_DATA_PATH, mode 0700 (files 0600: the documents are in there)

A local cluster keeps each node's data and log under nodes/<name>/ instead, and server.json lists
every node under "nodes". Nothing here starts or asks a process anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from stitcher import config
from stitcher.errors import ServerError

STATE_FILE = "server.json"

LOCK_FILE = "server.lock"

API_KEY_FILE = "api-key"

LOG_FILE = "weaviate.log"

DATA_DIR = "data"

#: Where the filesystem backup module writes, under the server's home.
BACKUPS_DIR = "backups"

#: Where the nodes of a local cluster keep their data and logs: home/nodes/<name>/.
NODES_DIR = "nodes"

#: Raft remembers the node name in the data directory, so it must never change for a home.
NODE_NAME = "stitcher"

API_KEY_USER = "stitcher"

#: Weaviate's internal cluster API (CLUSTER_DATA_BIND_PORT) listens on every interface whatever
#: CLUSTER_BIND_ADDR says, and without CLUSTER_BASIC_AUTH_* it reads and deletes objects for
#: anyone who can reach the port. Every node of a home gets the same random pair.
CLUSTER_AUTH_FILE = "cluster-auth"

CLUSTER_AUTH_USER = "stitcher-node"

#: Group and other permission bits: nothing under a home's data, backups and logs keeps them.
_SHARED_BITS = 0o077

LOG_ROTATE_BYTES = 20 * 1024 * 1024


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
class RecordedNode:
    """One node of a local cluster as server.json records it."""

    index: int
    ports: Ports
    pid: int | None

    @property
    def name(self) -> str:
        return cluster_node_name(self.index)


def cluster_node_name(index: int) -> str:
    """Name of node `index` of a local cluster (raft remembers it: never change it)."""
    return f"{NODE_NAME}-{index}"


def node_directory(home: Path, index: int) -> Path:
    return home / NODES_DIR / cluster_node_name(index)


def is_cluster_state(state: dict[str, Any]) -> bool:
    return isinstance(state.get("nodes"), list)


def nodes_from_state(state: dict[str, Any]) -> list[RecordedNode]:
    found = []
    for index, entry in enumerate(state.get("nodes") or []):
        ports = ports_from_state(entry) if isinstance(entry, dict) else None
        if ports is None:
            raise ServerError(
                f"node {index} in server.json has no ports: stop the cluster, delete server.json "
                "and start it again"
            )
        pid = entry.get("pid")
        found.append(RecordedNode(index, ports, pid if isinstance(pid, int) else None))
    return found


def nodes_to_state(
    nodes: list[RecordedNode], versions: dict[int, str] | None = None
) -> dict[str, Any]:
    entries = []
    for node in nodes:
        entry: dict[str, Any] = {"name": node.name, **ports_to_state(node.ports), "pid": node.pid}
        if versions and node.index in versions:
            entry["version"] = versions[node.index]
        entries.append(entry)
    return {"nodes": entries, "started_at": utc_now()}


def resolve_home(home: Path | None) -> Path:
    resolved = Path(home).expanduser() if home is not None else config.stitcher_home()
    resolved = resolved.absolute()
    resolved.mkdir(parents=True, exist_ok=True)
    return resolved


@contextlib.contextmanager
def home_lock(home: Path, timeout: float) -> Iterator[None]:
    # filelock pulls in asyncio (~60 ms)
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


def read_state(home: Path) -> dict[str, Any]:
    try:
        loaded = json.loads((home / STATE_FILE).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise ServerError(
            f"{home / STATE_FILE} is unreadable ({error}): delete it and start again"
        ) from None
    return loaded if isinstance(loaded, dict) else {}


def write_state(home: Path, state: dict[str, Any]) -> None:
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


def ports_from_state(state: dict[str, Any]) -> Ports | None:
    values = {attr: state.get(key) for attr, key in _PORT_FIELDS.items()}
    if not all(isinstance(value, int) for value in values.values()):
        return None
    return Ports(**values)  # type: ignore[arg-type]


def ports_to_state(ports: Ports) -> dict[str, int]:
    return {key: getattr(ports, attr) for attr, key in _PORT_FIELDS.items()}


def ensure_api_key(key_file: Path) -> str:
    return _ensure_secret(key_file, "API key")


def read_api_key(key_file: Path) -> str:
    return _read_secret(key_file, "API key")


def ensure_cluster_password(auth_file: Path) -> str:
    """The password every node of a home requires on its internal API (made once, kept)."""
    return _ensure_secret(auth_file, "cluster password")


def _ensure_secret(path: Path, what: str) -> str:
    if path.is_file():
        return _read_secret(path, what)
    secret = secrets.token_urlsafe(32)
    # Created 0600 from the first byte on: no window where another user could read it.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(secret + "\n")
    return secret


def _read_secret(path: Path, what: str) -> str:
    try:
        secret = path.read_text().strip()
    except OSError as error:
        raise ServerError(f"Cannot read the {what} file {path}: {error.strerror}") from None
    if not secret:
        raise ServerError(f"The {what} file {path} is empty: delete it and restart the server")
    return secret


def private_paths(home: Path) -> Iterator[Path]:
    """What under `home` holds documents or their traces: data, backups, node folders, logs.

    The home itself is left as the user made it (it may be a folder of theirs); the key files
    are created 0600 on their own.
    """
    for name in (DATA_DIR, BACKUPS_DIR, NODES_DIR):
        top = home / name
        if top.is_dir() and not top.is_symlink():
            yield top
            for folder, folders, files in os.walk(top):
                base = Path(folder)
                for child in (*folders, *files):
                    path = base / child
                    if not path.is_symlink():
                        yield path
    for log in sorted(home.glob(LOG_FILE + "*")):
        if log.is_file() and not log.is_symlink():
            yield log


def shared_paths(home: Path) -> list[Path]:
    """Paths of `private_paths` that another local user could read (group/other bits set)."""
    loose = []
    for path in private_paths(home):
        with contextlib.suppress(OSError):
            if path.lstat().st_mode & _SHARED_BITS:
                loose.append(path)
    return loose


def make_private(home: Path) -> int:
    """Remove group and other permissions from everything `private_paths` lists.

    Homes made before the server ran with umask 077 have a 0755 data directory and 0644
    segment files: every local user could read the documents without the key. Returns how
    many paths were changed.
    """
    changed = 0
    for path in private_paths(home):
        with contextlib.suppress(OSError):
            mode = path.lstat().st_mode
            if mode & _SHARED_BITS:
                os.chmod(path, stat.S_IMODE(mode) & ~_SHARED_BITS)
                changed += 1
    return changed


def open_private_log(log_file: Path) -> int:
    """A descriptor appending to `log_file`, which is (made) readable by its owner only."""
    descriptor = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.fchmod(descriptor, 0o600)
    return descriptor


def tail_lines(path: Path, lines: int) -> list[str]:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            text = handle.read().decode(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-lines:]


def readable_log_line(log_line: str) -> str:
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


def rotate_log(log_file: Path) -> None:
    # The log is appended to across restarts; keep one previous generation once it gets big.
    with contextlib.suppress(OSError):
        if log_file.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(log_file, log_file.with_name(log_file.name + ".1"))


def local_url(http_port: int) -> str:
    return f"http://127.0.0.1:{http_port}"


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
