"""The server's processes: how one is started, whether a pid is still ours, how it is stopped,
and which ports are free. Process facts come from psutil (procfs on Linux, sysctl on macOS).
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

from stitcher.errors import ServerError
from stitcher.server.files import (
    API_KEY_USER,
    BACKUPS_DIR,
    CLUSTER_AUTH_USER,
    DATA_DIR,
    NODE_NAME,
    Ports,
    cluster_node_name,
    node_directory,
    open_private_log,
    rotate_log,
    utc_now,
)

#: Variables a server may inherit from the caller; anything else (LIMIT_RESOURCES, GOMEMLIMIT,
#: a stray QUERY_DEFAULTS_LIMIT, ...) could silently change how it behaves.
INHERITED_ENVIRONMENT = ("PATH", "HOME", "TMPDIR", "TZ")

#: Seconds a killed process may take to let go of its ports and to vanish from the process table.
PORT_RELEASE_GRACE = 5.0

#: Seconds raft's timeouts are multiplied by on a local cluster. 1 (as for a lone node) makes
#: elections flap when the machine is busy; Weaviate's default of 5 makes a restart slow.
CLUSTER_RAFT_TIMEOUTS_MULTIPLIER = 2

# Popen objects of servers this process started, so stop() can reap them (no zombies in
# long-lived processes such as a test session) and no ResourceWarning fires on garbage collection.
_children: dict[int, subprocess.Popen[bytes]] = {}


def server_environment(
    home: Path, ports: Ports, api_key: str, cluster_password: str
) -> dict[str, str]:
    """The Weaviate settings of one local node (without inherited PATH/HOME).

    Args:
        home: The server's home directory; data goes to `home/data`.
        ports: Ports the node listens on.
        api_key: The only key the server accepts.
        cluster_password: What the node's internal API (the data port) requires, with the user
            CLUSTER_AUTH_USER; the same on every node of a cluster.

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
        # The data port (and gRPC) listen on every interface whatever CLUSTER_BIND_ADDR says
        # (Weaviate binds ":port"); this pair is what keeps the internal API closed.
        "CLUSTER_BASIC_AUTH_USERNAME": CLUSTER_AUTH_USER,
        "CLUSTER_BASIC_AUTH_PASSWORD": cluster_password,
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


def cluster_node_environment(
    home: Path, index: int, peers: list[Ports], api_key: str, cluster_password: str
) -> dict[str, str]:
    """The settings of node `index` of a local cluster whose nodes listen on `peers`.

    The single-node settings, with per-node data, raft bootstrapped by all nodes together
    (RAFT_JOIN names every node, RAFT_BOOTSTRAP_EXPECT their number) and gossip joined through
    node 0.
    """
    environment = server_environment(home, peers[index], api_key, cluster_password)
    name = cluster_node_name(index)
    environment.update(
        {
            "PERSISTENCE_DATA_PATH": str(node_directory(home, index) / DATA_DIR),
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


def spawn(
    binary: Path, http_port: int, cwd: Path, environment: dict[str, str], log_file: Path
) -> subprocess.Popen[bytes]:
    """Run one weaviate-server in its own session, appending its output to `log_file`.

    The API key travels in the environment only, never on the command line (`ps` shows that).
    The server runs with umask 077 and its log is 0600: the data files hold the documents, and
    nobody but the owner should read them without the key.
    """
    rotate_log(log_file)
    with os.fdopen(open_private_log(log_file), "ab") as log:
        log.write(f"\n--- stitcher: starting {binary} at {utc_now()} ---\n".encode())
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
                umask=0o077,
            )
        except OSError as error:
            raise ServerError(f"Could not run {binary}: {error.strerror}") from None
    _children[process.pid] = process
    return process


def pid_alive(pid: int) -> bool:
    """Whether `pid` is a live process; a zombie (exited, not yet reaped) counts as gone."""
    _reap(pid)
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # ZombieProcess included
        return False
    except psutil.AccessDenied:
        return True  # exists, owned by someone else


def settle(pid: int) -> None:
    """Wait for a process that is exiting to finish.

    While the kernel tears a process down its command line is already empty, so it would look
    like "another program" instead of the dead weaviate it is about to be.
    """
    deadline = time.monotonic() + PORT_RELEASE_GRACE
    while pid_alive(pid) and command_line(pid) == [] and time.monotonic() < deadline:
        time.sleep(0.05)


def _reap(pid: int) -> None:
    process = _children.get(pid)
    if process is not None and process.poll() is not None:
        del _children[pid]


def command_line(pid: int) -> list[str] | None:
    """The argv of `pid`: [] while an exiting process is torn down, None when it is gone or
    hidden from us."""
    try:
        return psutil.Process(pid).cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def is_our_server(pid: int, http_port: int) -> bool:
    """Whether `pid` is a weaviate-server serving REST on `http_port` (not a recycled pid)."""
    if not pid_alive(pid):
        return False
    argv = command_line(pid)
    if not argv or "weaviate" not in Path(argv[0]).name:
        return False
    return any(
        argv[index] == "--port" and argv[index + 1] == str(http_port)
        for index in range(len(argv) - 1)
    )


def terminate(pid: int, timeout: float) -> None:
    """SIGTERM, wait, SIGKILL; returns once the process is gone."""
    try:
        # The Process object remembers the start time, so a signal never reaches a process
        # that took over the pid after ours exited.
        process = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return
            time.sleep(0.05)
    if pid_alive(pid):
        raise ServerError(f"Weaviate (pid {pid}) did not stop even after SIGKILL")


def terminate_all(pids: Sequence[int], timeout: float) -> None:
    """`terminate` every one of `pids`, SIGTERM to all first: they shut down side by side
    instead of one after the other."""
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            psutil.Process(pid).send_signal(signal.SIGTERM)
    for pid in pids:
        terminate(pid, timeout)


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


def taken_ports(ports: Ports) -> dict[str, int]:
    """Recorded ports still in use after PORT_RELEASE_GRACE seconds (a killed server frees them
    only once it has fully exited, a moment after its pid stops looking like weaviate)."""
    deadline = time.monotonic() + PORT_RELEASE_GRACE
    while True:
        taken = {name: port for name, port in ports.named().items() if not _port_is_free(port)}
        if not taken or time.monotonic() >= deadline:
            return taken
        time.sleep(0.1)


#: Where the kernel takes the source ports of outgoing connections when it cannot say (no
#: /proc): the lower bound of Linux's default range; BSD, macOS and Windows start at 49152.
DEFAULT_EPHEMERAL_PORTS = (32768, 65535)
#: Ports below this are left to system services and to what people configure by hand.
LOWEST_CHOSEN_PORT = 20000
EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_ports() -> tuple[int, int]:
    """The range the kernel draws outgoing connections' source ports from (inclusive)."""
    try:
        low, high = (int(part) for part in EPHEMERAL_RANGE_FILE.read_text().split())
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL_PORTS
    return low, high


def port_candidates() -> list[int]:
    """Ports a server may be given, in random order: none from the ephemeral range.

    A port the kernel hands out with bind(0) is an ephemeral one, and so is the source port of
    every outgoing connection on the machine. A node that is restarted on its recorded ports
    (a cluster must keep them: its peers know it by them) then finds one of them taken by any
    long-lived connection that happened to draw it while the node was down, and cannot start.
    Seen in CI: a restarted node's port held by a client connection of the test session.
    """
    low, high = ephemeral_ports()
    below = range(LOWEST_CHOSEN_PORT, low) if low > LOWEST_CHOSEN_PORT else range(1024, low)
    above = range(high + 1, 65536)
    ports = [*below, *above]
    if len(ports) < 1000:  # an ephemeral range that covers almost everything: no way around it
        ports = list(range(1024, 65536))
    random.shuffle(ports)
    return ports


def port_holder(port: int) -> str:
    """Who holds `port`, for an error message: ' (held by pid N, NAME: a listening socket)' or
    '' when the system will not say."""
    try:
        connections = psutil.net_connections(kind="inet")
    except (psutil.Error, OSError):
        return ""
    for connection in connections:
        if connection.laddr and connection.laddr.port == port and connection.pid:
            try:
                name = psutil.Process(connection.pid).name()
            except psutil.Error:
                name = "?"
            what = "a listening socket" if connection.status == "LISTEN" else "a connection"
            return f" (held by pid {connection.pid}, {name}: {what})"
    return ""


def choose_free_ports(taken: set[int] | None = None) -> Ports:
    """Free ports for one node; `taken` (updated) keeps the nodes of a cluster apart."""
    taken = set() if taken is None else taken
    candidates = port_candidates()

    def pick(needs_next: bool = False) -> int:
        for port in candidates[:2000]:
            wanted = [port, port + 1] if needs_next else [port]
            if taken.isdisjoint(wanted) and all(p < 65536 and _port_is_free(p) for p in wanted):
                taken.update(wanted)
                return port
        raise ServerError("Could not find free ports on 127.0.0.1 for the local Weaviate")

    return Ports(http=pick(), grpc=pick(), gossip=pick(), data=pick(), raft=pick(needs_next=True))
