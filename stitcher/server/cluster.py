"""The life cycle of a local cluster (`start(home, nodes=3)`): every node keeps its data and log
under nodes/<name>/, the API key is shared, raft is bootstrapped by all nodes together.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stitcher import provision
from stitcher.errors import ServerError, setting
from stitcher.server.files import (
    API_KEY_FILE,
    CLUSTER_AUTH_FILE,
    DATA_DIR,
    LOG_FILE,
    NODES_DIR,
    STATE_FILE,
    RecordedNode,
    ensure_api_key,
    ensure_cluster_password,
    is_cluster_state,
    local_url,
    make_private,
    node_directory,
    nodes_from_state,
    nodes_to_state,
    ports_from_state,
    read_api_key,
    readable_log_line,
    tail_lines,
    write_state,
)
from stitcher.server.readiness import (
    collection_counts,
    healthy_version,
    internal_api_is_closed,
    raft_leader,
    wait_until_cluster_ready,
)
from stitcher.server.reports import NodeStatus, Notice, ServerInfo, ServerStatus, cluster_node_info
from stitcher.server.supervision import (
    INHERITED_ENVIRONMENT,
    choose_free_ports,
    cluster_node_environment,
    is_our_server,
    pid_alive,
    port_holder,
    settle,
    spawn,
    taken_ports,
    terminate,
    terminate_all,
)


def node_count_to_start(home: Path, state: dict[str, Any], nodes: int | None) -> int:
    """How many nodes `start` brings up; refuses to turn one layout into the other."""
    if is_cluster_state(state):
        recorded = len(state["nodes"])
        if nodes is not None and nodes != recorded:
            raise ServerError(
                f"{home} holds a {recorded}-node cluster; a cluster cannot grow or shrink here. "
                f"Start it with {setting('nodes', recorded)}, or use another STITCHER_HOME"
            )
        return recorded
    wanted = nodes or 1
    if wanted > 1:
        pid = state.get("pid")
        single_ports = ports_from_state(state)
        if isinstance(pid, int) and single_ports and is_our_server(pid, single_ports.http):
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
            f"{setting('nodes', 'N')}, or use another STITCHER_HOME for a single node"
        )
    return wanted


def start_cluster_locked(
    home: Path, state: dict[str, Any], count: int, timeout: float, say: Notice
) -> ServerInfo:
    binary = provision.binary_path()
    if not binary.is_file():
        raise ServerError(
            f"Weaviate server binary not found at {binary}: run `stitcher server install`"
        )
    nodes = nodes_from_state(state) if is_cluster_state(state) else []
    if not nodes:
        taken: set[int] = set()
        nodes = [RecordedNode(index, choose_free_ports(taken), None) for index in range(count)]
    api_key = ensure_api_key(home / API_KEY_FILE)
    cluster_password = ensure_cluster_password(home / CLUSTER_AUTH_FILE)
    make_private(home)
    peers = [node.ports for node in nodes]
    processes: dict[int, Callable[[], bool]] = {}
    spawned: set[int] = set()
    _refuse_mixed_authentication(nodes)
    for position, node in enumerate(nodes):
        if node.pid is not None:
            settle(node.pid)
            if is_our_server(node.pid, node.ports.http):
                pid = node.pid
                processes[node.index] = lambda pid=pid: pid_alive(pid)  # type: ignore[misc]
                continue
            say(f"node {node.name} (pid {node.pid}) is not running; starting it again")
        for purpose, port in taken_ports(node.ports).items():
            raise ServerError(
                f"Port {port} ({purpose} of node {node.name}), recorded in {home / STATE_FILE}, "
                f"is in use by another process{port_holder(port)}: stop that process, or stop "
                "the cluster and "
                "delete server.json to pick new ports"
            )
        node_home = node_directory(home, node.index)
        (node_home / DATA_DIR).mkdir(mode=0o700, parents=True, exist_ok=True)
        environment = {
            name: os.environ[name] for name in INHERITED_ENVIRONMENT if name in os.environ
        }
        environment.update(
            cluster_node_environment(home, node.index, peers, api_key, cluster_password)
        )
        process = spawn(binary, node.ports.http, node_home, environment, node_home / LOG_FILE)
        nodes[position] = RecordedNode(node.index, node.ports, process.pid)
        spawned.add(node.index)
        processes[node.index] = lambda process=process: process.poll() is None  # type: ignore[misc]
        # Recorded at once, so a failed start still lets `server stop` find every process.
        write_state(home, nodes_to_state(nodes))
    versions = wait_until_cluster_ready(nodes, api_key, timeout, processes)
    if versions is None:
        down = [n.name for n in nodes if not processes[n.index]()]
        tails = " | ".join(
            readable_log_line(line)
            for n in nodes
            for line in tail_lines(node_directory(home, n.index) / LOG_FILE, 2)
        )
        what = f"nodes {', '.join(down)} exited" if down else f"not ready within {timeout:g} s"
        # Only what this call started: the nodes that were running keep serving (a cluster with
        # one node down is still a cluster), so a node that will not come back costs no more.
        for node in nodes:
            if node.index in spawned and node.pid is not None:
                terminate(node.pid, 10)
        kept = [RecordedNode(n.index, n.ports, None) if n.index in spawned else n for n in nodes]
        write_state(home, nodes_to_state(kept))
        running = [n.name for n in kept if n.pid is not None]
        still = f"; {', '.join(running)} kept running" if running else ""
        raise ServerError(
            f"the local cluster did not start ({what}{still}); see "
            f"{home / NODES_DIR}/*/{LOG_FILE}. Last log lines: {tails or '(empty logs)'}"
        )
    write_state(home, nodes_to_state(nodes, versions))
    entry = nodes[0]
    assert entry.pid is not None
    return cluster_node_info(home, entry, versions[0], len(nodes))


def running_cluster_entry(home: Path, state: dict[str, Any], say: Notice) -> ServerInfo | None:
    """Node 0 of a running cluster (lock-free); notices name the nodes that are down.

    A cluster with a node down still serves (that is what replication is for), so it is used
    as it is; `stitcher server start` brings the missing nodes back.
    """
    nodes = nodes_from_state(state)
    entry = nodes[0]
    key_file = home / API_KEY_FILE
    if entry.pid is None or not is_our_server(entry.pid, entry.ports.http):
        return None
    if not key_file.is_file():
        return None
    version = healthy_version(entry.ports.http, read_api_key(key_file))
    if version is None:
        return None
    down = [n.name for n in nodes[1:] if n.pid is None or not is_our_server(n.pid, n.ports.http)]
    if down:
        say(
            f"local cluster: {', '.join(down)} not running (reads and writes go on with the "
            "others); `stitcher server start` restarts it"
        )
    return cluster_node_info(home, entry, version, len(nodes))


def stop_cluster_locked(home: Path, state: dict[str, Any], timeout: float) -> bool:
    nodes = nodes_from_state(state)
    ours = [n.pid for n in nodes if n.pid is not None and is_our_server(n.pid, n.ports.http)]
    terminate_all(ours, timeout)
    write_state(home, {**state, "nodes": [{**e, "pid": None} for e in state["nodes"]]})
    return bool(ours)


def _refuse_mixed_authentication(nodes: list[RecordedNode]) -> None:
    """A node started now requires the nodes' password on its internal API; one still running
    from an older stitcher sends none and would be refused, splitting the cluster."""
    running = [
        node for node in nodes if node.pid is not None and is_our_server(node.pid, node.ports.http)
    ]
    if len(running) == len(nodes):
        return
    unprotected = [n.name for n in running if internal_api_is_closed(n.ports.data) is False]
    if unprotected:
        raise ServerError(
            f"node(s) {', '.join(unprotected)} run without a password on their internal port "
            "(started by an older stitcher) and would refuse to talk to the nodes started now: "
            "stop the cluster (`stitcher server stop`) and start it again"
        )


def cluster_status(home: Path, state: dict[str, Any], gse: Path | None) -> ServerStatus:
    nodes = nodes_from_state(state)
    key_file = home / API_KEY_FILE
    api_key = read_api_key(key_file) if key_file.is_file() else ""
    found: list[NodeStatus] = []
    for node in nodes:
        version = None
        if node.pid is None:
            detail = "not running"
        else:
            settle(node.pid)
            if not pid_alive(node.pid):
                detail = f"pid {node.pid} is not running (crashed or killed?)"
            elif not is_our_server(node.pid, node.ports.http):
                detail = f"pid {node.pid} now belongs to another program"
            else:
                version = healthy_version(node.ports.http, api_key)
                detail = "ready" if version else f"does not answer at {local_url(node.ports.http)}"
        found.append(
            NodeStatus(node.name, node.pid, node.ports, version is not None, version, detail)
        )
    entry = nodes[0]
    log_file = node_directory(home, 0) / LOG_FILE
    ready = [n for n in found if n.ready]
    answering = next((nodes[i] for i, n in enumerate(found) if n.ready), None)
    leader = raft_leader(answering.ports.http, api_key, 1) if answering else None
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
        info=cluster_node_info(home, answering, version, len(nodes)),
        version=version,
        collections=collection_counts(answering.ports.http, api_key),
        gse_dictionary_dir=gse,
        ports=answering.ports,
        detail=detail,
        nodes=tuple(found),
        leader=leader,
    )
