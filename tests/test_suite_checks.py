"""The suite's own end-of-run checks (tests/conftest.py), run on an inner pytest session: a
Weaviate left running by some test or fixture fails the run and is stopped; every run ends with
its slowest tests.

The inner session uses this repository's pytest configuration and hooks (its conftest imports
tests/conftest.py). Its "server" is a copy of `sleep` named weaviate-server, run in a home under
the inner run's basetemp, which is all the check looks at: no real server is started.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent

#: The repository's hooks and fixtures (the autouse one is private, so named).
INNER_CONFTEST = """
from tests.conftest import *  # noqa: F403
from tests.conftest import _isolated_environment  # noqa: F401
"""

LEAVES_A_SERVER = """
import shutil
import subprocess
from pathlib import Path


def test_starts_a_server_and_forgets_it(tmp_path_factory):
    home = tmp_path_factory.mktemp("forgotten-home")
    fake = home / "weaviate-server"
    shutil.copy(shutil.which("sleep"), fake)
    process = subprocess.Popen([str(fake), "600"], cwd=home, start_new_session=True)
    (home / "pid").write_text(str(process.pid))
"""


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_server_left_running_fails_the_run_and_is_stopped(tmp_path: Path) -> None:
    project = tmp_path / "inner"
    project.mkdir()
    (project / "conftest.py").write_text(INNER_CONFTEST)
    (project / "test_forgets.py").write_text(LEAVES_A_SERVER)
    basetemp = tmp_path / "basetemp"
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    environment.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"),
         f"--basetemp={basetemp}", "-p", "no:cacheprovider", "-p", "no:xdist", str(project)],
        cwd=project, env=environment, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    pid = int(next(basetemp.glob("forgotten-home*/pid")).read_text())
    try:
        # The test itself passed; the run failed because of what it left behind.
        assert done.returncode == 1, done.stdout + done.stderr
        assert "1 passed" in done.stdout, done.stdout
        assert f"FAILED: a Weaviate server (pid {pid}) was still running in" in done.stdout
        deadline = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), "the end-of-run check did not stop the server it found"
        # --durations=25 (pyproject's addopts): every run names its slowest tests.
        assert "slowest 25 durations" in done.stdout, done.stdout
    finally:
        if _alive(pid):
            psutil.Process(pid).kill()
        shutil.rmtree(basetemp, ignore_errors=True)
