"""Shared fixtures: an isolated environment for every test, and one real Weaviate per session.

The server starts lazily, only when a test asks for `weaviate_server` (or `weaviate_client`), so
runs of pure unit tests stay fast. It lives in the session's STITCHER_HOME, so code that falls
back to the local default server (the CLI without --url) finds this very server.

Under pytest-xdist (`make test`) every worker is a session of its own: its own basetemp (so its
own STITCHER_HOME), its own server on its own free ports. The 3-node cluster lives only as long
as the module that asked for it. When the run ends, no weaviate-server may be left running in
any home under the run's basetemp: one that is gets stopped and fails the run
(`pytest_sessionfinish`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, Phase, settings

from stitcher import provision, server
from stitcher.config import ConnectionSettings

if TYPE_CHECKING:
    import weaviate

#: Variables pinned for the whole session (stable rich output, no model downloads).
PINNED_ENVIRONMENT = {
    "COLUMNS": "100",
    "TERMINAL_WIDTH": "100",
    "NO_COLOR": "1",
    "HF_HUB_OFFLINE": "1",
}

# Hypothesis profiles. "ci" (`.ci/run` sets HYPOTHESIS_PROFILE=ci; so does a CI variable) must give
# the same verdict on every run of the same code: examples are derived from each test's name
# (derandomize), nothing is read from or saved to the local example database, and a failure
# prints the blob that replays it. "dev" (everywhere else) keeps Hypothesis's random search and
# its database, so local runs go on exploring new cases; pin every counterexample found that way
# with @example so CI checks it from then on. HYPOTHESIS_PROFILE=ci|dev picks one explicitly.
# Tests that set max_examples themselves keep their own number under both profiles.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    print_blob=True,
    max_examples=100,
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

#: Variables that would point stitcher at some other server.
REMOVED_ENVIRONMENT = (
    "WEAVIATE_URL",
    "WEAVIATE_API_KEY",
    "WEAVIATE_GRPC_PORT",
    # stitcher.toml and its settings (stitcher.config): a developer's own must not leak in.
    "STITCHER_CONFIG",
    "STITCHER_PROFILE",
    "STITCHER_COLLECTION",
    "STITCHER_MODEL",
    "STITCHER_ALPHA",
    "STITCHER_LIMIT",
    "STITCHER_DEVICE",
    "STITCHER_WORKERS",
    # The warm search worker (stitcher.warm): tests that want it ask for it.
    "STITCHER_WARM",
    "STITCHER_WARM_IDLE",
)

# The server that served this run, for the terminal summary.
_served: list[server.ServerInfo] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "integration: needs the real Weaviate server (started once per session)"
    )
    config.addinivalue_line(
        "markers", "cluster: needs the local 3-node Weaviate cluster (started once per module)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that (even indirectly) uses the server is an integration test, so
    `-m "not integration"` really runs without one. `binary_required` (tests/test_server.py)
    is asked for by tests that start real servers of their own."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if {"weaviate_server", "weaviate_client", "weaviate_cluster", "binary_required"} & used:
            item.add_marker(pytest.mark.integration)
        if "weaviate_cluster" in used:
            item.add_marker(pytest.mark.cluster)


# This session's STITCHER_HOME once made, for the per-test check below.
_session_home: list[Path] = []


@pytest.fixture(scope="session")
def stitcher_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """STITCHER_HOME of this session: where the session's server keeps its data and key."""
    home = tmp_path_factory.mktemp("stitcher-home")
    _session_home.append(home)
    return home


@pytest.fixture(scope="session", autouse=True)
def _isolated_environment(stitcher_home: Path) -> Iterator[None]:
    # STITCHER_CACHE stays as it is: the server binary and ONNX exports are shared between runs.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STITCHER_HOME", str(stitcher_home))
        patch.setenv("XDG_CONFIG_HOME", str(stitcher_home / "xdg-config"))
        for name, value in PINNED_ENVIRONMENT.items():
            patch.setenv(name, value)
        for name in REMOVED_ENVIRONMENT:
            patch.delenv(name, raising=False)
        yield


@pytest.fixture(scope="session")
def weaviate_server(
    stitcher_home: Path, _isolated_environment: None
) -> Iterator[server.ServerInfo]:
    """One real local Weaviate for the whole session, on free ports, stopped at the end."""
    binary = provision.binary_path()
    if not binary.is_file():
        pytest.fail(
            f"The Weaviate server binary is missing ({binary}): run `stitcher server install` "
            "(or make setup) before the tests",
            pytrace=False,
        )
    info = server.start(stitcher_home, timeout=120)
    _served.append(info)
    try:
        yield info
    finally:
        server.stop(stitcher_home)


#: Nodes of the test cluster: the smallest that keeps a QUORUM with one node down.
CLUSTER_NODES = 3


@pytest.fixture(scope="module")
def weaviate_cluster(
    tmp_path_factory: pytest.TempPathFactory, _isolated_environment: None
) -> Iterator[server.ServerInfo]:
    """A real local 3-node cluster (its own home), stopped when the module that uses it ends:
    three ~0.5 GB servers must not idle through the rest of the run.

    The returned info is node 0's, the node clients connect to; tests that kill nodes kill
    others and bring them back with `server.start(info.home)`.
    """
    binary = provision.binary_path()
    if not binary.is_file():
        pytest.fail(f"The Weaviate server binary is missing ({binary})", pytrace=False)
    home = tmp_path_factory.mktemp("cluster-home")
    info = server.start(home, nodes=CLUSTER_NODES, timeout=300)
    _served.append(info)
    try:
        yield info
    finally:
        server.stop(home)
        _served.remove(info)


@pytest.fixture(scope="session")
def weaviate_client(weaviate_server: server.ServerInfo) -> Iterator[weaviate.WeaviateClient]:
    """A client connected to the session's server with its API key."""
    from stitcher.store.weaviate.connection import connect

    settings = ConnectionSettings(
        url=weaviate_server.url,
        api_key=weaviate_server.api_key(),
        grpc_port=weaviate_server.grpc_port,
    )
    client = connect(settings)
    try:
        yield client
    finally:
        client.close()


def _session_server_mark(home: Path) -> float | None:
    """When the session home's server state was last written (None: never)."""
    try:
        return (home / "server.json").stat().st_mtime
    except FileNotFoundError:
        return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test outside `integration` must not start the session's server: the CLI without --url
    starts it in STITCHER_HOME, and under `-m "not integration"` nothing would ever stop it."""
    if not _session_home or item.get_closest_marker("integration"):
        return (yield)
    home = _session_home[0]
    before = _session_server_mark(home)
    try:
        return (yield)
    finally:
        if _session_server_mark(home) != before and _weaviate_processes_under(home):
            server.stop(home)
            pytest.fail(
                "this test started the local Weaviate server in the session's STITCHER_HOME "
                "without asking for the `weaviate_server` fixture (which marks it integration): "
                "request that fixture, or pass the server's --url",
                pytrace=False,
            )


def _weaviate_processes_under(root: Path) -> list[tuple[int, str]]:
    """Live weaviate-server processes (pid, working directory) running in a home under `root`:
    a server's working directory is its home (or a node's directory inside a cluster's home)."""
    import psutil

    found = []
    for process in psutil.process_iter(["name", "cwd", "status"]):
        name, cwd = process.info["name"] or "", process.info["cwd"]
        if "weaviate" not in name or not cwd or process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        cwd = cwd.removesuffix(" (deleted)")
        if Path(cwd).is_relative_to(root):
            found.append((process.pid, cwd))
    return found


def _stop_processes(pids: list[int], timeout: float = 30) -> None:
    import psutil

    processes = []
    for pid in pids:
        try:
            processes.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            continue
    for process in processes:
        process.terminate()
    _, alive = psutil.wait_procs(processes, timeout=timeout)
    for process in alive:
        process.kill()
    psutil.wait_procs(alive, timeout=10)


# Servers found running when the run ended, for the terminal summary.
_left_running: list[tuple[int, str]] = []
# Tests that skipped where skipping is forbidden, for the terminal summary.
_forbidden_skips: list[str] = []


def _fail_on_skips(session: pytest.Session) -> None:
    """Under STITCHER_TESTS_FORBID_SKIPS=1 (`.ci/run`), a skipped test fails the run: in CI a
    test that cannot run (no server, no model) is a failure, whatever a future test does."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if os.environ.get("STITCHER_TESTS_FORBID_SKIPS") != "1" or reporter is None:
        return
    _forbidden_skips.extend(report.nodeid for report in reporter.stats.get("skipped", []))
    if _forbidden_skips and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a weaviate-server is still running in a home of this run, and stop it.

    Runs in the process that owns the run's basetemp: the only process without xdist, the
    controller with it (after every worker has torn its fixtures down; workers' basetemps are
    folders of the controller's).
    """
    if hasattr(session.config, "workerinput"):
        return
    _fail_on_skips(session)
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    # A server stopped a moment ago may still be exiting: give it time before calling it left.
    basetemp, deadline = factory.getbasetemp(), time.monotonic() + 10
    while (left := _weaviate_processes_under(basetemp)) and time.monotonic() < deadline:
        time.sleep(0.5)
    if not left:
        return
    _left_running.extend(left)
    _stop_processes([pid for pid, _ in left])
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for info in _served:
        terminalreporter.write_line(
            f"Weaviate {info.version} served this run at {info.url} (pid {info.pid})"
        )
    for nodeid in _forbidden_skips:
        terminalreporter.write_line(
            f"FAILED: {nodeid} was skipped, and STITCHER_TESTS_FORBID_SKIPS=1 forbids skips",
            red=True,
        )
    for pid, home in _left_running:
        terminalreporter.write_line(
            f"FAILED: a Weaviate server (pid {pid}) was still running in {home} when the run "
            "ended; it is stopped now. Some test or fixture starts a server and does not stop it.",
            red=True,
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    # Belt and braces: a session interrupted before fixture teardown must not leave a server.
    for info in _served:
        if os.path.isdir(info.home):
            server.stop(info.home)
