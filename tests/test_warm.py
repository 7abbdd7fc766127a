"""The warm search worker (stitcher.warm, issue 16 item 7), through the installed script.

Every search here runs in a subprocess of the real `stitcher` script against the session's real
Weaviate, each test with a STITCHER_HOME of its own (so a worker of its own) and the server given
by URL and key. That the worker answered is read from the worker itself (its count of searches
served), never inferred from timings.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stitcher import warm
from stitcher.errors import setting, worded
from stitcher.models import Passage, ScoreExplain
from stitcher.search import SearchResult
from tests.test_exit_codes import REPO, run_stitcher, script_environment

SAMPLES = ("en_bird_migration.txt", "zh_homemade_tofu.md", "zh_sewing_machine_manual.txt")

#: Searches compared between the worker and the in-process path: English, Chinese, filters,
#: explanations, the latest listing, raw chunks.
QUERIES: tuple[tuple[str, ...], ...] = (
    ("how do birds navigate at night?",),
    ("豆腐 怎么做",),
    ("卤水", "--where", "lang=zh", "--explain"),
    ("stars", "--where-any", "lang=en", "--where-any", "tags=美食", "-k", "3"),
    ("--latest", "-k", "2"),
    ("缝纫机 针", "--no-stitch", "--alpha", "0.3", "--explain"),
)

#: Long enough that no worker exits in the middle of a test, short enough that none outlives
#: the run by much if a test fails before its cleanup.
TEST_IDLE = "120"


@pytest.fixture(scope="module")
def collection(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    corpus = tmp_path_factory.mktemp("warm-docs")
    for name in SAMPLES:
        shutil.copy(REPO / "samples" / name, corpus / name)
    name = "Warm" + uuid.uuid4().hex[:10]
    done = run_stitcher("ingest", str(corpus), "--collection", name)
    assert done.returncode == 0, done.stderr
    return name


@pytest.fixture
def home() -> Iterator[Path]:
    """A short STITCHER_HOME of the test's own (its socket path stays under the 107-byte limit of
    unix sockets), whose worker is stopped at the end whatever happened."""
    folder = Path(tempfile.mkdtemp(prefix="stw-"))
    try:
        yield folder
    finally:
        warm.stop_worker(folder)
        shutil.rmtree(folder, ignore_errors=True)


def environment(home: Path, server: Any, **changes: str) -> dict[str, str]:
    settings = {
        "STITCHER_HOME": str(home),
        "WEAVIATE_URL": server.url,
        "WEAVIATE_API_KEY": server.api_key(),
        "WEAVIATE_GRPC_PORT": str(server.grpc_port),
        "STITCHER_WARM": "always",
        "STITCHER_WARM_IDLE": TEST_IDLE,
    }
    return script_environment(**{**settings, **changes})


def search(env: dict[str, str], collection: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_stitcher("search", *args, "--collection", collection, env=env)


def wait_for_worker(home: Path) -> dict[str, Any]:
    """The worker's status once it answers (it starts in the background after a search)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = warm.status(home)
        if found is not None:
            return found
        time.sleep(0.2)
    log = warm.warm_dir(home) / warm.LOG_FILE
    pytest.fail(f"no worker answered; its log: {log.read_text() if log.exists() else '-'}")


def wait_until_gone(pid: int) -> bool:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or _zombie(pid):
            return True
        time.sleep(0.1)
    return False


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


def without_timing(output: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(output)
    data.pop("took_ms")
    return data


def served(home: Path) -> int:
    found = warm.status(home)
    assert found is not None, "no worker answered"
    return int(found["served"])


# --- through the installed script ------------------------------------------------------------


def test_later_searches_are_served_by_the_worker_with_the_in_process_output(
    weaviate_server: Any, collection: str, home: Path
) -> None:
    env = environment(home, weaviate_server)
    first = search(env, collection, "how do birds navigate at night?", "--json")
    assert first.returncode == 0, first.stderr
    assert wait_for_worker(home)["served"] == 0  # the first search ran in-process

    for args in QUERIES:
        before = served(home)
        warm_json = search(env, collection, *args, "--json")
        assert warm_json.returncode == 0, warm_json.stderr
        assert served(home) == before + 1, args
        cold_json = search(env, collection, *args, "--json", "--no-warm")
        assert cold_json.returncode == 0, cold_json.stderr
        assert served(home) == before + 1, args  # --no-warm never asks
        assert without_timing(warm_json.stdout) == without_timing(cold_json.stdout), args
        assert json.loads(warm_json.stdout)["results"] or "--latest" in args

        # The panels too: rendered by the caller from the worker's data, byte for byte.
        warm_panels = search(env, collection, *args)
        cold_panels = search(env, collection, *args, "--no-warm")
        assert served(home) == before + 2, args
        assert (warm_panels.returncode, cold_panels.returncode) == (0, 0)
        assert warm_panels.stdout == cold_panels.stdout, args
        assert warm_panels.stderr == cold_panels.stderr, args
        if "--alpha" in args:  # the worker's reason names the setting; the caller spells it
            assert "as requested (--alpha)" in json.loads(warm_json.stdout)["alpha_reason"]
            assert "as requested (--alpha)" in warm_panels.stdout


def test_a_served_search_loads_neither_the_client_nor_the_model(
    weaviate_server: Any, collection: str, home: Path
) -> None:
    from tests.test_startup import NOT_FOR_HELP, imported_modules, top_level

    env = environment(home, weaviate_server)
    assert search(env, collection, "stars", "--json").returncode == 0
    wait_for_worker(home)

    done = run_stitcher(
        "search",
        "stars",
        "--explain",
        "--collection",
        collection,
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
    )

    assert done.returncode == 0, done.stderr
    assert served(home) == 1
    modules = top_level(imported_modules(done.stderr))
    assert {"stitcher", "typer", "rich"} <= modules  # the log was read, the panels rendered
    assert not modules & set(NOT_FOR_HELP) - {"pydantic"}, sorted(modules)  # typer loads pydantic


def test_the_worker_never_imports_a_stitcher_folder_of_the_working_directory(
    weaviate_server: Any, collection: str, home: Path, tmp_path: Path
) -> None:
    decoy = tmp_path / "stitcher"
    decoy.mkdir()
    marker = tmp_path / "imported"
    (decoy / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    from tests.test_exit_codes import stitcher_script

    done = subprocess.run(
        [str(stitcher_script()), "search", "stars", "--collection", collection, "--json"],
        env=environment(home, weaviate_server),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert wait_for_worker(home)["served"] == 0
    assert not marker.exists()


def test_the_socket_and_its_folder_are_private(
    weaviate_server: Any, collection: str, home: Path
) -> None:
    done = search(environment(home, weaviate_server), collection, "stars", "--json")
    assert done.returncode == 0, done.stderr
    wait_for_worker(home)
    path = warm.socket_path(home)
    assert path.parent == warm.warm_dir(home)  # a short home keeps it there
    assert stat.S_ISSOCK(path.stat().st_mode)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_an_error_is_reported_as_without_the_worker(
    weaviate_server: Any, collection: str, home: Path
) -> None:
    env = environment(home, weaviate_server)
    assert search(env, collection, "stars", "--json").returncode == 0
    pid = wait_for_worker(home)["pid"]
    missing = "Nothere" + uuid.uuid4().hex[:8]

    with_worker = search(env, missing, "stars")
    without = search(env, missing, "stars", "--no-warm")

    assert with_worker.returncode == without.returncode != 0
    assert with_worker.stderr == without.stderr
    assert "does not exist" in with_worker.stderr
    assert with_worker.stdout == without.stdout == ""
    assert served(home) == 0  # the worker never answers with an error
    assert (warm.status(home) or {}).get("pid") == pid  # and no second one was started


def test_a_changed_fingerprint_restarts_the_worker(
    weaviate_server: Any, collection: str, home: Path
) -> None:
    env = environment(home, weaviate_server)
    assert search(env, collection, "stars", "--json").returncode == 0
    old = wait_for_worker(home)["pid"]

    # Another environment that shapes a search (as new code would): the old worker refuses.
    changed = environment(home, weaviate_server, STITCHER_WARM_TEST_MARK="1")
    done = search(changed, collection, "stars", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"]
    assert wait_until_gone(old)
    log = (warm.warm_dir(home) / warm.LOG_FILE).read_text()
    new = wait_for_worker(home)
    assert new["pid"] != old and new["served"] == 0
    assert "stale" in log

    again = search(changed, collection, "stars", "--json")
    assert again.returncode == 0, again.stderr
    assert served(home) == 1


def test_a_killed_worker_leaves_the_next_search_to_run_in_process(
    weaviate_server: Any, collection: str, home: Path
) -> None:
    env = environment(home, weaviate_server)
    assert search(env, collection, "stars", "--json").returncode == 0
    pid = wait_for_worker(home)["pid"]
    os.kill(pid, signal.SIGKILL)
    assert wait_until_gone(pid)
    assert warm.socket_path(home).exists()  # a dead worker's socket is left behind

    done = search(env, collection, "stars", "--json")
    cold = search(env, collection, "stars", "--json", "--no-warm")

    assert done.returncode == 0, done.stderr
    assert without_timing(done.stdout) == without_timing(cold.stdout)
    replacement = wait_for_worker(home)  # ... and that search started a new one
    assert replacement["pid"] != pid and replacement["served"] == 0


def test_an_idle_worker_exits_by_itself(weaviate_server: Any, collection: str, home: Path) -> None:
    env = environment(home, weaviate_server, STITCHER_WARM_IDLE="2")
    assert search(env, collection, "stars", "--json").returncode == 0
    found = wait_for_worker(home)
    assert found["idle"] == 2

    # Asking how it is (server status, doctor) does not keep it alive: only searches do.
    deadline = time.monotonic() + 120
    while warm.status(home) is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert warm.status(home) is None, "status requests kept the idle worker alive"
    assert wait_until_gone(found["pid"])
    assert not warm.socket_path(home).exists()
    assert "idle for 2 s; exiting" in (warm.warm_dir(home) / warm.LOG_FILE).read_text()


def test_server_status_and_doctor_show_the_worker(
    weaviate_server: Any, collection: str, home: Path
) -> None:
    env = environment(home, weaviate_server, COLUMNS="200")
    assert search(env, collection, "stars", "--json").returncode == 0
    pid = wait_for_worker(home)["pid"]

    shown = run_stitcher("server", "status", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    worker = json.loads(shown.stdout)["warm_worker"]
    assert worker["running"] and worker["pid"] == pid, worker
    assert (worker["sessions"], worker["served"], worker["idle"]) == (1, 0, float(TEST_IDLE))
    assert 0 < worker["idle_left"] <= worker["idle"]
    text = run_stitcher("server", "status", env=env)
    assert text.returncode == 0, text.stderr
    words = " ".join(text.stdout.split())  # the table wraps a long row
    assert f"running as stitcher-warm, pid {pid}: idle" in words
    assert "1 open session, 0 searches served (stop it: stitcher server stop)" in words
    doctor = run_stitcher("doctor", "--json", env=env)
    checks = {check["check"]: check for check in json.loads(doctor.stdout)}
    assert checks["warm worker"]["status"] == "ok"
    assert checks["warm worker"]["detail"].startswith(f"running as stitcher-warm, pid {pid}:")

    assert warm.stop_worker(home) and wait_until_gone(pid)
    shown = run_stitcher("server", "status", "--json", env=env)
    assert json.loads(shown.stdout)["warm_worker"] == {"running": False}
    text = run_stitcher("server", "status", env=env)
    assert "not running (a search from a terminal starts it)" in text.stdout
    doctor = run_stitcher("doctor", env=env)
    assert "not running (a search from a terminal starts it)" in doctor.stdout


def test_server_stop_stops_the_worker(weaviate_server: Any, collection: str, home: Path) -> None:
    env = environment(home, weaviate_server)
    assert search(env, collection, "stars", "--json").returncode == 0
    pid = wait_for_worker(home)["pid"]

    # This home has no local server of its own: only its worker is stopped.
    stopped = run_stitcher("server", "stop", env=env)

    assert stopped.returncode == 0, stopped.stderr
    assert wait_until_gone(pid)
    assert warm.status(home) is None


def test_drop_stops_the_worker(weaviate_server: Any, collection: str, home: Path) -> None:
    env = environment(home, weaviate_server)
    assert search(env, collection, "stars", "--json").returncode == 0
    pid = wait_for_worker(home)["pid"]

    dropped = run_stitcher("drop", "--collection", "Gone" + uuid.uuid4().hex[:8], "--yes", env=env)

    assert dropped.returncode == 0, dropped.stderr
    assert wait_until_gone(pid)


def test_auto_without_a_terminal_starts_nothing(
    weaviate_server: Any, collection: str, home: Path
) -> None:
    env = environment(home, weaviate_server, STITCHER_WARM="auto")
    for _ in range(2):
        done = search(env, collection, "stars", "--json")  # stdin /dev/null, stdout a pipe
        assert done.returncode == 0, done.stderr
    assert not warm.warm_dir(home).exists()
    assert warm.status(home) is None


# --- the pieces ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "stdin_tty", "stdout_tty", "expected"),
    [
        ("auto", False, False, False),
        ("auto", True, False, True),
        ("auto", False, True, True),
        ("always", False, False, True),
        ("never", True, True, False),
    ],
)
def test_when_the_worker_is_wanted(
    mode: str, stdin_tty: bool, stdout_tty: bool, expected: bool
) -> None:
    assert warm.wanted(mode, stdin_tty=stdin_tty, stdout_tty=stdout_tty) is expected


def test_a_search_result_survives_the_trip_as_data() -> None:
    explain = ScoreExplain(0.5, "relative", 0.8, None, 0.4, None, "raw text")
    result = SearchResult(
        query="豆腐",
        passages=[
            Passage(
                text="点卤。",
                source="a.md",
                doc_id="a.md",
                score=0.91,
                hit_ids=("h1",),
                chunk_ids=("h0", "h1"),
                start=3,
                end=6,
                truncated=True,
                explain=explain,
                metadata={"lang": "zh", "tags": ["美食"], "page": 2},
                hit_spans=((3, 5), (5, 6)),
            )
        ],
        took_ms=12.5,
        round_trips=2,
        extra={"sql": "select 1"},
        alpha=0.1,
        alpha_reason="why",
    )
    data = json.loads(json.dumps(warm.result_to_data(result)))
    assert warm.result_from_data(data) == result

    # A reason that names a setting keeps it named on the way, for the caller to spell.
    named = replace(result, alpha_reason="(alpha)", _alpha_reason=f"({setting('alpha')})")
    data = json.loads(json.dumps(warm.result_to_data(named)))
    spelled = warm.result_from_data(data).spelled(lambda text: worded(text, {"alpha": "--alpha"}))
    assert spelled.alpha_reason == "(--alpha)"


def test_the_fingerprint_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    before = warm.fingerprint()
    monkeypatch.setenv("STITCHER_WARM", "never")  # the warm settings themselves do not count
    assert warm.fingerprint() == before
    monkeypatch.setenv("STITCHER_CACHE", "/elsewhere")
    assert warm.fingerprint() != before


def test_a_deep_home_gets_its_socket_in_a_short_private_path(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    path = warm.socket_path(deep)
    assert len(os.fsencode(path)) <= 100
    assert path != warm.socket_path(tmp_path / ("e" * 120))
