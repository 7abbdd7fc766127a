"""Life cycle of the local Weaviate server ("embedded default") that lives under a home directory.

A home holds one server or a local cluster (`start(home, nodes=3)`), never both: raft remembers
node names in the data. The server binds REST to 127.0.0.1, but gRPC and the cluster data port
listen on every interface whatever the flags say, which is why API-key authentication is always
on.

The package is split by concern, each layer importing only those below it:
    files        the home's layout, server.json, the API key file, logs (no processes)
    supervision  spawning, recognising and stopping server processes (psutil), free ports
    readiness    REST health, raft leader, object counts (urllib; never the weaviate client)
    reports      ServerInfo / ServerStatus / NodeStatus, what the life cycle hands back
    cluster      the life cycle of a local cluster
    (here)       start / ensure_running / stop / status / log_tail, and a single node's life cycle
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from stitcher import config, provision
from stitcher.errors import ServerError, setting
from stitcher.server.cluster import (
    cluster_status,
    node_count_to_start,
    running_cluster_entry,
    start_cluster_locked,
    stop_cluster_locked,
)
from stitcher.server.files import (
    API_KEY_FILE,
    API_KEY_USER,
    BACKUPS_DIR,
    CLUSTER_AUTH_FILE,
    CLUSTER_AUTH_USER,
    DATA_DIR,
    LOCK_FILE,
    LOG_FILE,
    NODE_NAME,
    NODES_DIR,
    STATE_FILE,
    Ports,
    cluster_node_name,
    ensure_api_key,
    ensure_cluster_password,
    home_lock,
    is_cluster_state,
    local_url,
    make_private,
    ports_from_state,
    ports_to_state,
    read_api_key,
    read_state,
    readable_log_line,
    resolve_home,
    tail_lines,
    utc_now,
    write_state,
)
from stitcher.server.readiness import (
    CollectionCount,
    collection_counts,
    healthy_version,
    wait_until_ready,
)
from stitcher.server.reports import (
    NodeStatus,
    Notice,
    ServerInfo,
    ServerState,
    ServerStatus,
    single_node_info,
)
from stitcher.server.supervision import (
    INHERITED_ENVIRONMENT,
    choose_free_ports,
    cluster_node_environment,
    is_our_server,
    pid_alive,
    port_holder,
    server_command,
    server_environment,
    settle,
    spawn,
    taken_ports,
    terminate,
)

__all__ = [
    "API_KEY_FILE",
    "API_KEY_USER",
    "BACKUPS_DIR",
    "CLUSTER_AUTH_FILE",
    "CLUSTER_AUTH_USER",
    "DATA_DIR",
    "LOCK_FILE",
    "LOG_FILE",
    "NODES_DIR",
    "NODE_NAME",
    "STATE_FILE",
    "CollectionCount",
    "NodeStatus",
    "Notice",
    "Ports",
    "ServerInfo",
    "ServerState",
    "ServerStatus",
    "cluster_node_environment",
    "cluster_node_name",
    "ensure_running",
    "log_tail",
    "server_command",
    "server_environment",
    "start",
    "status",
    "stop",
]


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
    home = resolve_home(home)
    say = notice or (lambda _message: None)
    if nodes is not None and nodes < 1:
        raise ServerError(f"{setting('nodes')} must be at least 1, not {nodes}")
    with home_lock(home, timeout + 30):
        state = read_state(home)
        wanted = node_count_to_start(home, state, nodes)
        if wanted > 1:
            return start_cluster_locked(home, state, wanted, timeout, say)
        ports = ports_from_state(state)
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
    home = resolve_home(home)
    # Lock-free fast path: most calls find the server up and should not queue behind a start.
    state = read_state(home)
    if is_cluster_state(state):
        running = running_cluster_entry(home, state, notice or (lambda _message: None))
        return running or start(home, timeout=timeout, notice=notice)
    ports = ports_from_state(state)
    pid = state.get("pid")
    if isinstance(pid, int) and ports is not None and is_our_server(pid, ports.http):
        key_file = home / API_KEY_FILE
        if key_file.is_file():
            version = healthy_version(ports.http, read_api_key(key_file))
            if version is not None:
                return single_node_info(home, ports, pid, version)
    return start(home, timeout=timeout, notice=notice)


def stop(home: Path | None = None, timeout: float = 30) -> bool:
    """Stop the local server under `home`: SIGTERM, then SIGKILL after `timeout` seconds.

    Args:
        home: The server's home directory (default: config.stitcher_home()).
        timeout: Seconds to wait for a clean shutdown before killing.

    Returns:
        True when a server was running and has stopped, False when nothing was running.
    """
    home = resolve_home(home)
    with home_lock(home, timeout + 90):
        state = read_state(home)
        if is_cluster_state(state):
            return stop_cluster_locked(home, state, timeout)
        ports = ports_from_state(state)
        pid = state.get("pid")
        if not isinstance(pid, int):
            return False
        stopped = False
        if ports is not None and is_our_server(pid, ports.http):
            terminate(pid, timeout)
            stopped = True
        write_state(home, {**state, "pid": None})
        return stopped


def status(home: Path | None = None) -> ServerStatus:
    """Describe the local server under `home` without changing anything.

    Returns:
        state "running" (answering with its key), "stopped" (nothing recorded or cleanly
        stopped) or "stale" (a pid is recorded but its process is gone, is another program, or
        does not answer); with version and per-collection object counts when running. For a
        cluster, every node's state, and "degraded" when some but not all nodes are running.
    """
    home = resolve_home(home)
    log_file = home / LOG_FILE
    gse = provision.gse_dictionary_dir()
    state = read_state(home)
    if is_cluster_state(state):
        return cluster_status(home, state, gse)
    ports = ports_from_state(state)
    pid = state.get("pid")
    if not isinstance(pid, int) or ports is None:
        return ServerStatus(
            "stopped", home, log_file, gse_dictionary_dir=gse, ports=ports, detail="not running"
        )
    settle(pid)
    if not pid_alive(pid):
        detail = f"pid {pid} in {home / STATE_FILE} is not running (crashed or killed?)"
        return ServerStatus(
            "stale", home, log_file, gse_dictionary_dir=gse, ports=ports, detail=detail
        )
    if not is_our_server(pid, ports.http):
        detail = f"pid {pid} in {home / STATE_FILE} now belongs to another program"
        return ServerStatus(
            "stale", home, log_file, gse_dictionary_dir=gse, ports=ports, detail=detail
        )
    key_file = home / API_KEY_FILE
    api_key = read_api_key(key_file) if key_file.is_file() else ""
    version = healthy_version(ports.http, api_key)
    if version is None:
        detail = f"Weaviate (pid {pid}) does not answer at {local_url(ports.http)}"
        return ServerStatus(
            "stale", home, log_file, gse_dictionary_dir=gse, ports=ports, detail=detail
        )
    info = single_node_info(home, ports, pid, version)
    return ServerStatus(
        "running",
        home,
        log_file,
        info=info,
        version=version,
        collections=collection_counts(ports.http, api_key),
        gse_dictionary_dir=gse,
        ports=ports,
        detail=f"running at {info.url} (pid {pid})",
    )


def log_tail(home: Path | None = None, lines: int = 20) -> list[str]:
    """The last `lines` lines of the server log under `home` (empty when there is no log)."""
    return tail_lines(resolve_home(home) / LOG_FILE, lines)


def _adopt_recorded(
    home: Path, state: dict[str, Any], pid: int, ports: Ports, timeout: float, say: Notice
) -> ServerInfo | None:
    """Return the recorded server when it is ours and healthy; report and clear it otherwise."""
    state_file = home / STATE_FILE
    settle(pid)
    if not pid_alive(pid):
        say(
            f"Weaviate (pid {pid}) recorded in {state_file} is no longer running "
            f"(crashed or killed; see {home / LOG_FILE}); starting a new one"
        )
    elif not is_our_server(pid, ports.http):
        say(
            f"pid {pid} recorded in {state_file} now belongs to another program; "
            "leaving it alone and starting a new Weaviate"
        )
    else:
        api_key = read_api_key(home / API_KEY_FILE)
        # It may still be loading its data (a start that another process began); give it time.
        version = wait_until_ready(ports.http, api_key, timeout, alive=lambda: pid_alive(pid))
        if version is not None:
            expected = config.WEAVIATE_VERSION
            if version != expected and config.weaviate_binary_override() is None:
                say(
                    f"the running server is Weaviate {version}, this stitcher pins {expected}: "
                    "restart it (`stitcher server stop`, then `stitcher server start`) to switch"
                )
            return single_node_info(home, ports, pid, version)
        say(
            f"Weaviate (pid {pid}) under {home} did not answer within {timeout:g} s; "
            "stopping it and starting a new one"
        )
        terminate(pid, 30)
    write_state(home, {**state, "pid": None})
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
        ports = choose_free_ports()
    else:
        for purpose, port in taken_ports(ports).items():
            raise ServerError(
                f"Port {port} ({purpose}), recorded in {state_file}, is in use by another "
                f"process{port_holder(port)}: stop that process, or delete {state_file} to "
                "pick new ports (the server URL will change)"
            )
    api_key = ensure_api_key(home / API_KEY_FILE)
    cluster_password = ensure_cluster_password(home / CLUSTER_AUTH_FILE)
    (home / DATA_DIR).mkdir(mode=0o700, exist_ok=True)
    make_private(home)
    environment = {name: os.environ[name] for name in INHERITED_ENVIRONMENT if name in os.environ}
    environment.update(server_environment(home, ports, api_key, cluster_password))
    log_file = home / LOG_FILE
    process = spawn(binary, ports.http, home, environment, log_file)
    write_state(
        home,
        {
            **ports_to_state(ports),
            "pid": process.pid,
            "version": config.WEAVIATE_VERSION,
            "started_at": utc_now(),
        },
    )
    version = wait_until_ready(ports.http, api_key, timeout, alive=lambda: process.poll() is None)
    if version is None:
        exited = process.poll() is not None
        if not exited:
            terminate(process.pid, 10)
        write_state(home, {**read_state(home), "pid": None})
        what = "exited during start" if exited else f"was not ready within {timeout:g} s"
        last_lines = (
            " | ".join(readable_log_line(line) for line in tail_lines(log_file, 5)) or "(empty log)"
        )
        raise ServerError(f"Weaviate {what}; see {log_file}. Last log lines: {last_lines}")
    write_state(home, {**read_state(home), "version": version})
    return single_node_info(home, ports, process.pid, version)
