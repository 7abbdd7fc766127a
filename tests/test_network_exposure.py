"""No door left open (issue 33 items 1–2): every port of the server as a stranger sees it, and
data that other local users cannot read.

Weaviate binds gRPC and its internal data port to every interface whatever it is told
(`net.Listen(":port")`), so binding cannot close them: the data port needs the nodes' basic-auth
pair and gRPC the API key. The proof connects from a non-loopback address. It uses a network
namespace of its own (`unshare -n`) with a second address on its loopback device, so no packet
leaves the machine; the server is started inside it by the installed script. Where namespaces
cannot be made the bind addresses are asserted instead, as seen by the kernel.
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import psutil
import pytest

from stitcher import server
from stitcher.server.files import make_private, shared_paths
from stitcher.server.readiness import internal_api_is_closed
from tests.test_exit_codes import run_stitcher, script_environment, stitcher_script

PROBE = Path(__file__).with_name("netprobe.py")

#: A non-loopback address that exists only inside the test's own network namespace.
FOREIGN_ADDRESS = "10.213.0.1"

WILDCARD = {"0.0.0.0", "::"}


def namespaces_available() -> bool:
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        return False
    made = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    return made.returncode == 0


def in_namespace_of(pid: int, *command: str, env: dict[str, str]) -> str:
    result = subprocess.run(
        ["nsenter", f"--net=/proc/{pid}/ns/net", "--", *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def loose_home(home: Path) -> None:
    """A home as older stitchers left it: data 0755, segment files and log 0644."""
    data = home / server.DATA_DIR / "somecollection"
    data.mkdir(parents=True)
    (home / server.DATA_DIR).chmod(0o755)
    data.chmod(0o755)
    (data / "segment.db").write_text("documents")
    (data / "segment.db").chmod(0o644)
    (home / server.LOG_FILE).write_text("old log\n")
    (home / server.LOG_FILE).chmod(0o644)


@pytest.fixture(scope="module")
def stranger_view(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Start a server with the installed script on a home made loose beforehand, and look at
    it from a foreign address; stopped when the module ends.

    Without network namespaces (not root, no unshare) the probe runs beside the server and the
    "foreign" address is loopback: the authentication checks still hold, and the listener test
    asserts bind addresses instead of foreign connections.
    """
    home = tmp_path_factory.mktemp("exposed-home")
    loose_home(home)
    env = script_environment(STITCHER_HOME=str(home))
    script = str(stitcher_script())
    isolated = namespaces_available()
    if isolated:
        setup = f'ip link set lo up && ip addr add {FOREIGN_ADDRESS}/32 dev lo && exec "$0" '
        command = ["unshare", "-n", "--", "sh", "-c", setup + "server start", script]
    else:
        command = [script, "server", "start"]
    started = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert started.returncode == 0, started.stderr
    pid = json.loads((home / "server.json").read_text())["pid"]
    try:
        if isolated:
            probe = [sys.executable, str(PROBE), str(home), FOREIGN_ADDRESS]
            seen = json.loads(in_namespace_of(pid, *probe, env=env))
        else:
            seen = json.loads(
                subprocess.run(
                    [sys.executable, str(PROBE), str(home), "127.0.0.1"],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=300,
                ).stdout
            )
        yield {"home": home, "namespace": isolated, **seen}
    finally:
        if isolated:
            # `server stop` recognises its server by the port it listens on, which only shows
            # inside the namespace.
            in_namespace_of(pid, script, "server", "stop", env=env)
        else:
            server.stop(home)
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"


@pytest.mark.integration
def test_only_the_authenticated_ports_listen_beyond_loopback(
    stranger_view: dict[str, Any],
) -> None:
    ports = stranger_view["ports"]
    listeners = stranger_view["listeners"]
    assert listeners, "the probe saw no listening socket: it looked at the wrong process"
    wide = {entry["port"] for entry in listeners if entry["address"] in WILDCARD}
    # Weaviate hard-codes these two to every interface; both are closed below.
    assert wide <= {ports["grpc"], ports["data"]}
    assert ports["data"] in wide  # still true of v1.38: if it changes, tighten this test
    for entry in listeners:
        if entry["address"] not in WILDCARD:
            assert entry["address"].startswith("127."), entry
            if stranger_view["namespace"]:
                assert not entry["accepts_foreign"], entry
        else:
            assert entry["accepts_foreign"], entry  # reachable, hence the checks below


@pytest.mark.integration
def test_the_internal_port_refuses_a_stranger(stranger_view: dict[str, Any]) -> None:
    assert stranger_view["object_created"] == 200
    assert stranger_view["data_get_anonymous"] == 401
    assert stranger_view["data_delete_anonymous"] == 401
    assert stranger_view["data_get_wrong_password"] == 401
    # The same request with the nodes' pair succeeds: the refusals were about the password.
    assert stranger_view["data_get_with_password"] == 200
    assert stranger_view["object_still_there"] == 200


@pytest.mark.integration
def test_grpc_from_a_stranger_needs_the_key(stranger_view: dict[str, Any]) -> None:
    assert stranger_view["grpc_refused_without_key"]


@pytest.mark.integration
def test_a_start_makes_an_old_home_private(stranger_view: dict[str, Any]) -> None:
    home: Path = stranger_view["home"]
    assert stat.S_IMODE((home / server.DATA_DIR).stat().st_mode) == 0o700
    old_segment = home / server.DATA_DIR / "somecollection" / "segment.db"
    assert stat.S_IMODE(old_segment.stat().st_mode) == 0o600
    assert stat.S_IMODE((home / server.LOG_FILE).stat().st_mode) == 0o600
    written = [p for p in (home / server.DATA_DIR).rglob("*") if p.is_file()]
    assert len(written) > 1  # the server wrote files of its own (raft, the probe's collection)
    assert shared_paths(home) == []


@pytest.mark.integration
def test_the_server_runs_with_umask_077(weaviate_server: server.ServerInfo) -> None:
    status = Path(f"/proc/{weaviate_server.pid}/status").read_text()
    umask = next(line.split()[1] for line in status.splitlines() if line.startswith("Umask:"))
    assert int(umask, 8) == 0o077


@pytest.mark.integration
def test_bind_addresses_without_a_namespace(weaviate_server: server.ServerInfo) -> None:
    """What the kernel says the session's server listens on (no foreign address needed)."""
    listeners = {
        (c.laddr.ip, c.laddr.port)
        for c in psutil.Process(weaviate_server.pid).net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    }
    ports = server.status(weaviate_server.home).ports
    assert ports is not None and listeners
    for address, port in listeners:
        if address in WILDCARD:
            assert port in {ports.grpc, ports.data}, (address, port)
        else:
            assert address.startswith("127."), (address, port)
    assert internal_api_is_closed(ports.data) is True


@pytest.mark.integration
def test_every_cluster_node_closes_its_internal_port(
    weaviate_cluster: server.ServerInfo,
) -> None:
    nodes = server.status(weaviate_cluster.home).nodes
    assert len(nodes) == 3
    passwords = set()
    for node in nodes:
        assert node.pid is not None
        listeners = {
            (c.laddr.ip, c.laddr.port)
            for c in psutil.Process(node.pid).net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN
        }
        assert listeners
        for address, port in listeners:
            if address in WILDCARD:  # only the two Weaviate will not bind, both closed
                assert port in {node.ports.grpc, node.ports.data}, (node.name, address, port)
            else:
                assert address.startswith("127."), (node.name, address, port)
        assert internal_api_is_closed(node.ports.data) is True
        environ = Path(f"/proc/{node.pid}/environ").read_bytes().split(b"\0")
        passwords |= {v for v in environ if v.startswith(b"CLUSTER_BASIC_AUTH_PASSWORD=")}
    assert len(passwords) == 1  # one pair on every node, or they could not talk to each other


class _Answer(BaseHTTPRequestHandler):
    code = 200

    def do_GET(self) -> None:
        self.send_response(self.code)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(("code", "closed"), [(200, False), (404, False), (401, True)])
def test_the_internal_port_probe(code: int, closed: bool) -> None:
    handler = type("Handler", (_Answer,), {"code": code})
    listener = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=listener.serve_forever, daemon=True)
    thread.start()
    try:
        assert internal_api_is_closed(listener.server_address[1]) is closed
    finally:
        listener.shutdown()
        listener.server_close()
    assert internal_api_is_closed(listener.server_address[1]) is None  # nothing answers now


def test_make_private_tightens_data_and_logs_but_not_the_home(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    loose_home(tmp_path)
    link_target = tmp_path / "elsewhere.txt"
    link_target.write_text("not ours")
    link_target.chmod(0o644)
    (tmp_path / server.DATA_DIR / "link").symlink_to(link_target)
    assert len(shared_paths(tmp_path)) == 4
    assert make_private(tmp_path) == 4
    assert shared_paths(tmp_path) == []
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755  # the user's folder, left alone
    assert stat.S_IMODE(link_target.stat().st_mode) == 0o644  # symlinks are not followed
    assert make_private(tmp_path) == 0


def doctor_checks(home: Path) -> dict[str, dict[str, str]]:
    """`stitcher doctor --json` through the installed script, by check name."""
    done = run_stitcher("doctor", "--json", env=script_environment(STITCHER_HOME=str(home)))
    return {check["check"]: check for check in json.loads(done.stdout)}


def test_doctor_warns_of_data_other_users_can_read(tmp_path: Path) -> None:
    loose_home(tmp_path)
    permissions = doctor_checks(tmp_path)["data permissions"]
    assert permissions["status"] == "warn"
    assert permissions["detail"].startswith("4 files and folders")  # data, its folder, file, log
    assert "server start" in permissions["fix"]
    make_private(tmp_path)
    assert doctor_checks(tmp_path)["data permissions"]["status"] == "ok"
