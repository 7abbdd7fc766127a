"""The local server's life cycle (real weaviate-server processes) and building its binary.

Life-cycle tests use their own temp homes, not the session server; starts are kept few because
each costs a few seconds. Binary provisioning is tested against a fake `go` on PATH.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from stitcher import config, provision, server
from stitcher.errors import ServerError
from stitcher.server import supervision

REPO = Path(__file__).resolve().parent.parent


def http_status(url: str, path: str, api_key: str | None = None, body: object = None) -> int:
    headers = {"Content-Type": "application/json"}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def http_json(url: str, path: str, api_key: str, body: object = None) -> dict:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def process_environment(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.decode().split("=", 1) for item in raw.split(b"\0") if item)
    return {name: value for name, value in pairs}


def weaviate_pids_in(home: Path) -> list[int]:
    """Live weaviate-server processes whose working directory is `home`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if "weaviate" in Path(argv0).name and Path(cwd) == home and state != "Z":
            found.append(int(entry.name))
    return found


def listening_addresses(port: int) -> set[str]:
    """Hex local addresses of IPv4 sockets in LISTEN state on `port` (0100007F = 127.0.0.1)."""
    addresses = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        address, port_hex = fields[1].split(":")
        if int(port_hex, 16) == port and fields[3] == "0A":
            addresses.add(address)
    return addresses


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """A fresh server home; whatever runs there is stopped afterwards."""
    directory = tmp_path / "home"
    try:
        yield directory
    finally:
        if directory.exists():
            server.stop(directory)


@pytest.fixture
def binary_required() -> None:
    if not provision.binary_path().is_file():
        pytest.fail("The Weaviate binary is missing: run `stitcher server install` (or make setup)")


# --- pure pieces -------------------------------------------------------------------------------


def test_server_environment_is_one_private_node() -> None:
    ports = server.Ports(http=8001, grpc=8002, gossip=8003, data=8004, raft=8005)
    environment = server.server_environment(Path("/srv/home"), ports, "k3y", "pa55")
    assert environment["PERSISTENCE_DATA_PATH"] == "/srv/home/data"
    assert environment["DISABLE_TELEMETRY"] == "true"
    assert environment["GO_PROFILING_DISABLE"] == "true"
    assert environment["AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED"] == "false"
    assert environment["AUTHENTICATION_APIKEY_ALLOWED_KEYS"] == "k3y"
    assert environment["ENABLE_TOKENIZER_GSE_CH"] == "true"
    assert environment["CLUSTER_BASIC_AUTH_USERNAME"] == server.CLUSTER_AUTH_USER
    assert environment["CLUSTER_BASIC_AUTH_PASSWORD"] == "pa55"
    assert environment["GRPC_PORT"] == "8002"
    assert environment["RAFT_INTERNAL_RPC_PORT"] == "8006"
    assert environment["RAFT_JOIN"] == f"{server.NODE_NAME}:8005"
    bind_settings = ("CLUSTER_BIND_ADDR", "CLUSTER_ADVERTISE_ADDR")
    assert {environment[name] for name in bind_settings} == {"127.0.0.1"}
    assert "PATH" not in environment


def test_server_command_binds_loopback_over_http() -> None:
    command = server.server_command(Path("/bin/weaviate-server"), 9999)
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--scheme") + 1] == "http"
    assert command[command.index("--port") + 1] == "9999"


def test_status_of_an_empty_home_is_stopped(tmp_path: Path) -> None:
    status = server.status(tmp_path / "nothing-here")
    assert status.state == "stopped"
    assert status.info is None
    assert server.stop(tmp_path / "nothing-here") is False
    summary = status.to_json()
    assert summary["pid"] is None and summary["url"] is None
    assert summary["api_key_file"] == str(tmp_path / "nothing-here" / "api-key")


def test_missing_binary_says_how_to_install(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STITCHER_WEAVIATE_BIN", str(tmp_path / "no-such-binary"))
    with pytest.raises(ServerError, match="stitcher server install"):
        server.start(home)
    with pytest.raises(ServerError, match="STITCHER_WEAVIATE_BIN"):
        provision.ensure_binary()


def test_server_that_exits_at_start_is_reported_with_its_log(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "weaviate-server"
    log_line = (
        '{"build_git_commit":"","level":"fatal","msg":"could not open data directory 数据",'
        '"error":"permission denied"}'
    )
    fake.write_text(f"#!/bin/sh\necho plain words\necho '{log_line}'\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("STITCHER_WEAVIATE_BIN", str(fake))
    with pytest.raises(ServerError) as raised:
        server.start(home, timeout=30)
    message = str(raised.value)
    assert "exited during start" in message
    assert "plain words | fatal: could not open data directory 数据 (permission denied)" in message
    assert "build_git_commit" not in message
    assert str(home / "weaviate.log") in message
    assert server.status(home).state == "stopped"


def test_recorded_port_taken_by_another_process_is_named(
    home: Path, binary_required: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervision, "PORT_RELEASE_GRACE", 0.2)
    home.mkdir()
    ports = supervision.choose_free_ports()
    state = {
        f"{name}_port": getattr(ports, name) for name in ("http", "grpc", "gossip", "data", "raft")
    }
    (home / "server.json").write_text(json.dumps({**state, "pid": None}))
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", ports.http))
        squatter.listen()
        with pytest.raises(ServerError) as raised:
            server.start(home)
    message = str(raised.value)
    assert f"Port {ports.http} (REST)" in message
    assert "server.json" in message and "delete" in message
    assert f"held by pid {os.getpid()}" in message and "a listening socket" in message


def test_chosen_ports_are_never_ephemeral(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Outgoing connections draw their source ports from the ephemeral range, so a server
    restarted on recorded ports from that range can find one held by any client (CI did)."""
    low, high = supervision.ephemeral_ports()
    for _round in range(20):
        ports = supervision.choose_free_ports()
        for port in (*ports.named().values(), ports.raft + 1):
            assert not low <= port <= high, (port, low, high)
            assert port >= supervision.LOWEST_CHOSEN_PORT or low <= supervision.LOWEST_CHOSEN_PORT
    # The range is read from the kernel where it says; a narrow one leaves ports above it too.
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("40000\t50000\n")
    monkeypatch.setattr(supervision, "EPHEMERAL_RANGE_FILE", ranges)
    assert supervision.ephemeral_ports() == (40000, 50000)
    candidates = set(supervision.port_candidates())
    assert not candidates & set(range(40000, 50001))
    assert 39999 in candidates and 50001 in candidates and 19999 not in candidates
    ranges.write_text("garbage")
    assert supervision.ephemeral_ports() == supervision.DEFAULT_EPHEMERAL_PORTS


def test_a_client_connection_on_a_port_would_block_a_restart_there() -> None:
    """Why the ports above are chosen as they are: an established connection whose source
    port is P makes P unusable for a listener, SO_REUSEADDR or not (what the start checks)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname()) as client:
            source_port = client.getsockname()[1]
            low, high = supervision.ephemeral_ports()
            assert low <= source_port <= high
            assert not supervision._port_is_free(source_port)
            assert "a connection" in supervision.port_holder(source_port)


_WAITS_FOR_ITS_PEER = """
import signal, sys, time
from pathlib import Path

me, peer, ready, out = map(Path, sys.argv[1:5])


def on_term(*_):
    me.touch()
    deadline = time.monotonic() + 30
    while not peer.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    out.write_text("together" if peer.exists() else "alone")
    sys.exit(0)


signal.signal(signal.SIGTERM, on_term)
ready.touch()
while True:
    time.sleep(1)
"""


def test_terminate_all_signals_every_process_before_waiting_for_one(tmp_path: Path) -> None:
    """Each process, once told to stop, waits for the other to be told too: stopped one after
    the other, the first would give up waiting and say "alone"."""
    names = ("a", "b")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _WAITS_FOR_ITS_PEER]
            + [str(tmp_path / name) for name in (f"{me}.term", f"{peer}.term", f"{me}.ready")]
            + [str(tmp_path / f"{me}.out")]
        )
        for me, peer in (names, names[::-1])
    ]
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"{n}.ready").exists() for n in names):
            assert time.monotonic() < deadline, "the processes never got ready"
            time.sleep(0.05)
        supervision.terminate_all([p.pid for p in processes], timeout=60)
        assert [p.wait(timeout=10) for p in processes] == [0, 0]
        assert [(tmp_path / f"{n}.out").read_text() for n in names] == ["together"] * 2
    finally:
        for process in processes:
            process.kill()
            process.wait()


# --- real servers ------------------------------------------------------------------------------


def test_start_status_stop_and_restart(
    home: Path, binary_required: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Settings a user might have exported must not leak into the server.
    monkeypatch.setenv("QUERY_DEFAULTS_LIMIT", "3")
    monkeypatch.setenv("DISABLE_TELEMETRY", "false")

    info = server.start(home)

    assert info.version == config.WEAVIATE_VERSION
    assert info.url == f"http://127.0.0.1:{info.http_port}"
    key = info.api_key()
    assert len(key) >= 32
    assert key not in repr(info)
    assert stat.S_IMODE(info.api_key_file.stat().st_mode) == 0o600
    recorded = json.loads((home / "server.json").read_text())
    assert recorded["pid"] == info.pid and recorded["http_port"] == info.http_port
    assert recorded["version"] == config.WEAVIATE_VERSION and recorded["started_at"]

    environment = process_environment(info.pid)
    assert environment["DISABLE_TELEMETRY"] == "true"
    assert environment["PERSISTENCE_DATA_PATH"] == str(home / "data")
    assert "QUERY_DEFAULTS_LIMIT" not in environment
    assert environment["PATH"] == os.environ["PATH"]
    assert listening_addresses(info.http_port) == {"0100007F"}

    assert http_status(info.url, "/v1/.well-known/ready") == 200
    assert http_status(info.url, "/v1/meta") == 401
    assert http_status(info.url, "/v1/meta", "wrong-" + key) == 401
    assert http_status(info.url, "/v1/schema", "wrong-" + key) == 401
    assert http_status(info.url, "/v1/meta", key) == 200

    status = server.status(home)
    assert status.state == "running"
    assert status.info == info
    assert status.version == config.WEAVIATE_VERSION
    summary = status.to_json()
    assert summary["url"] == info.url and summary["pid"] == info.pid
    assert summary["grpc_port"] == info.grpc_port
    assert summary["api_key_file"] == str(home / "api-key")
    assert key not in json.dumps(summary)

    assert server.start(home) == info  # already running: same process
    assert server.ensure_running(home) == info

    assert server.stop(home) is True
    assert server.status(home).state == "stopped"
    assert weaviate_pids_in(home) == []
    assert server.stop(home) is False

    again = server.start(home)
    assert again.pid != info.pid
    assert again.url == info.url  # ports are kept, so the URL is stable
    assert again.api_key() == key
    assert server.stop(home) is True


def test_racing_starts_give_one_server(home: Path, binary_required: None) -> None:
    script = "import sys; from stitcher import server; print(server.start(sys.argv[1]).pid)"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(home)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [racer.communicate(timeout=180) for racer in racers]
    assert [racer.returncode for racer in racers] == [0, 0], outputs
    pids = {int(stdout.strip()) for stdout, _ in outputs}
    assert len(pids) == 1
    assert weaviate_pids_in(home) == list(pids)


def test_stale_state_is_reported_and_replaced(home: Path, binary_required: None) -> None:
    notices: list[str] = []
    first = server.start(home, notice=notices.append)
    assert notices == []

    # A crash: the recorded pid is gone.
    os.kill(first.pid, signal.SIGKILL)
    crashed = server.status(home)
    assert crashed.state == "stale"
    assert str(first.pid) in crashed.detail

    second = server.start(home, notice=notices.append)
    assert second.pid != first.pid and second.url == first.url
    assert len(notices) == 1
    assert str(first.pid) in notices[0] and "no longer running" in notices[0]
    assert server.stop(home) is True

    # A recycled pid: the recorded pid now belongs to an unrelated program, which must survive.
    bystander = subprocess.Popen(["sleep", "300"])
    try:
        state = json.loads((home / "server.json").read_text())
        (home / "server.json").write_text(json.dumps({**state, "pid": bystander.pid}))
        recycled = server.status(home)
        assert recycled.state == "stale" and "another program" in recycled.detail

        notices.clear()
        third = server.start(home, notice=notices.append)
        assert len(notices) == 1 and "another program" in notices[0]
        assert str(bystander.pid) in notices[0]
        assert third.pid != bystander.pid
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_two_homes_run_side_by_side(
    weaviate_server: server.ServerInfo, home: Path, binary_required: None
) -> None:
    other = server.start(home)
    assert other.http_port != weaviate_server.http_port
    assert other.grpc_port != weaviate_server.grpc_port
    assert server.status(weaviate_server.home).state == "running"
    assert server.status(home).state == "running"
    # Each home has its own key; one server refuses the other's.
    assert http_status(other.url, "/v1/meta", other.api_key()) == 200
    assert http_status(other.url, "/v1/meta", weaviate_server.api_key()) == 401
    assert server.stop(home) is True
    assert server.status(weaviate_server.home).state == "running"


def test_session_server_segments_chinese_and_counts_objects(
    weaviate_server: server.ServerInfo,
) -> None:
    url, key = weaviate_server.url, weaviate_server.api_key()
    name = "ServerGseProbe"
    http_json(
        url,
        "/v1/schema",
        key,
        {
            "class": name,
            "vectorizer": "none",
            "properties": [{"name": "text", "dataType": ["text"], "tokenization": "gse_ch"}],
        },
    )
    try:
        for text in (
            "重新编译内核需要一些时间。软件包管理器很方便。",
            "The kernel must be recompiled.",
        ):
            http_json(url, "/v1/objects", key, {"class": name, "properties": {"text": text}})
        query = '{ Get { %s(bm25: {query: "%s"}) { text } } }'
        chinese = http_json(url, "/v1/graphql", key, {"query": query % (name, "软件")})
        assert [hit["text"] for hit in chinese["data"]["Get"][name]] == [
            "重新编译内核需要一些时间。软件包管理器很方便。"
        ]
        english = http_json(url, "/v1/graphql", key, {"query": query % (name, "kernel")})
        assert [hit["text"] for hit in english["data"]["Get"][name]] == [
            "The kernel must be recompiled."
        ]

        status = server.status(weaviate_server.home)
        counts = {collection.name: collection.objects for collection in status.collections}
        assert counts[name] == 2
        assert status.gse_dictionary_dir is not None
        assert {"name": name, "objects": 2} in status.to_json()["collections"]
    finally:
        assert http_status_delete(url, f"/v1/schema/{name}", key) == 200


def http_status_delete(url: str, path: str, api_key: str) -> int:
    request = urllib.request.Request(
        url + path, method="DELETE", headers={"Authorization": f"Bearer {api_key}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return int(response.status)


# --- provisioning the binary (fake go) ---------------------------------------------------------

FAKE_GO = textwrap.dedent(
    """\
    #!/bin/sh
    case "$1" in
      env)
        echo "$FAKE_GOVERSION"; echo "$FAKE_GOPATH"; echo "$FAKE_GOPATH/pkg/mod" ;;
      version)
        echo "$3: $FAKE_GOVERSION"
        printf '\\tpath\\tgithub.com/weaviate/weaviate/cmd/weaviate-server\\n'
        printf '\\tmod\\tgithub.com/weaviate/weaviate\\t%s\\th1:x=\\n' "$FAKE_BUILT_VERSION" ;;
      install)
        echo "$@" >> "$FAKE_BUILD_LOG"
        echo "go: downloading github.com/weaviate/weaviate v1.38.11"
        sleep 1
        if [ -n "$FAKE_FAIL" ]; then echo "compile: something broke"; exit 1; fi
        printf '#!/bin/sh\\necho built\\n' > "$GOBIN/weaviate-server"
        chmod +x "$GOBIN/weaviate-server" ;;
    esac
    """
)


@pytest.fixture
def fake_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A `go` that fakes env/version/install; returns the build log (one line per build)."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    go = bin_dir / "go"
    go.write_text(FAKE_GO)
    go.chmod(0o755)
    build_log = tmp_path / "builds.log"
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("STITCHER_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("STITCHER_WEAVIATE_BIN", raising=False)
    monkeypatch.delenv("GOFLAGS", raising=False)
    monkeypatch.setenv("FAKE_GOVERSION", "go1.26.1")
    monkeypatch.setenv("FAKE_GOPATH", str(tmp_path / "gopath"))
    monkeypatch.setenv("FAKE_BUILT_VERSION", "v" + config.WEAVIATE_VERSION)
    monkeypatch.setenv("FAKE_BUILD_LOG", str(build_log))
    provision._go_env.cache_clear()
    yield build_log
    provision._go_env.cache_clear()


def builds(build_log: Path) -> list[str]:
    return build_log.read_text().splitlines() if build_log.exists() else []


def test_binary_path_default_and_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STITCHER_CACHE", str(tmp_path))
    monkeypatch.delenv("STITCHER_WEAVIATE_BIN", raising=False)
    assert provision.binary_path("9.9.9") == tmp_path / "weaviate" / "9.9.9" / "weaviate-server"
    monkeypatch.setenv("STITCHER_WEAVIATE_BIN", str(tmp_path / "mine"))
    assert provision.binary_path() == tmp_path / "mine"


def test_concurrent_installs_build_once(fake_go: Path) -> None:
    results: list[Path] = []
    lines: list[str] = []
    errors: list[BaseException] = []

    def install() -> None:
        try:
            results.append(provision.ensure_binary(lines.append))
        except BaseException as error:  # surfaced by the assertion below
            errors.append(error)

    workers = [threading.Thread(target=install) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert errors == []
    target = provision.binary_path()
    assert results == [target, target]
    assert builds(fake_go) == [f"install {provision.WEAVIATE_PACKAGE}@v{config.WEAVIATE_VERSION}"]
    assert os.access(target, os.X_OK)
    assert "go: downloading github.com/weaviate/weaviate v1.38.11" in lines
    assert provision.ensure_binary() == target  # later calls are no-ops
    assert len(builds(fake_go)) == 1


def test_failed_build_leaves_nothing_behind(fake_go: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_FAIL", "1")
    lines: list[str] = []
    with pytest.raises(ServerError, match="something broke"):
        provision.ensure_binary(lines.append)
    target = provision.binary_path()
    assert not target.exists()
    assert [p.name for p in target.parent.iterdir() if p.name != "build.lock"] == []
    assert "compile: something broke" in lines


def test_existing_gopath_build_of_the_right_version_is_copied(
    fake_go: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = tmp_path / "gopath" / "bin" / "weaviate-server"
    built.parent.mkdir(parents=True)
    built.write_text("#!/bin/sh\necho prebuilt\n")
    built.chmod(0o755)
    lines: list[str] = []
    target = provision.ensure_binary(lines.append)
    assert target.read_text() == built.read_text()
    assert builds(fake_go) == []
    assert any("Copying" in line for line in lines)


def test_gopath_build_of_another_version_is_not_reused(
    fake_go: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = tmp_path / "gopath" / "bin" / "weaviate-server"
    built.parent.mkdir(parents=True)
    built.write_text("#!/bin/sh\necho old\n")
    monkeypatch.setenv("FAKE_BUILT_VERSION", "v1.30.0")
    target = provision.ensure_binary()
    assert "built" in target.read_text()
    assert len(builds(fake_go)) == 1


@pytest.mark.parametrize("goversion", ["go1.25.7", "go1.9"])
def test_old_go_is_refused(fake_go: Path, monkeypatch: pytest.MonkeyPatch, goversion: str) -> None:
    monkeypatch.setenv("FAKE_GOVERSION", goversion)
    with pytest.raises(ServerError, match=r"Go >= 1\.26 is needed .* set WEAVIATE_URL"):
        provision.ensure_binary()
    assert builds(fake_go) == []


def test_missing_go_is_refused(
    fake_go: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(ServerError, match="install Go, or set WEAVIATE_URL"):
        provision.ensure_binary()
    assert provision.gse_dictionary_dir() is None


def test_gse_dictionary_dir_follows_the_module_cache(fake_go: Path, tmp_path: Path) -> None:
    assert provision.gse_dictionary_dir() is None
    dictionaries = tmp_path / "gopath" / "pkg" / "mod" / provision.GSE_MODULE_DIR / "data"
    dictionaries.mkdir(parents=True)
    assert provision.gse_dictionary_dir() == dictionaries


def test_status_lists_user_collections_not_stitchers_bookkeeping(
    weaviate_server: server.ServerInfo,
) -> None:
    """Leases and the source registry are stitcher's own collections, not the user's: `server
    status` (table and --json) leaves them out and still lists the user's."""
    from stitcher.bookkeeping import BOOKKEEPING_COLLECTIONS
    from tests.test_exit_codes import run_stitcher

    url, key = weaviate_server.url, weaviate_server.api_key()
    user = "ServerStatusUser"
    created = []
    for name in [*sorted(BOOKKEEPING_COLLECTIONS), user]:
        if http_status(url, "/v1/schema", key, {"class": name, "vectorizer": "none"}) == 200:
            created.append(name)
    try:
        assert user in created
        listed = {c.name for c in server.status(weaviate_server.home).collections}
        assert user in listed and not listed & BOOKKEEPING_COLLECTIONS

        result = run_stitcher("server", "status", "--json")
        assert result.returncode == 0, result.stderr
        names = {c["name"] for c in json.loads(result.stdout)["collections"]}
        assert user in names and not names & BOOKKEEPING_COLLECTIONS
        table = run_stitcher("server", "status")
        assert user in table.stdout
        assert not any(name in table.stdout for name in BOOKKEEPING_COLLECTIONS)
    finally:
        for name in created:
            assert http_status_delete(url, f"/v1/schema/{name}", key) == 200
