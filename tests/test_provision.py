"""`stitcher server install` as a user sees it, with a fake `go` on PATH (no real build).

Go's download log (hundreds of `go: downloading` lines, cut into fragments on a narrow
terminal) goes to a file; stderr gets one redrawn line on a terminal, a start and a finish line
elsewhere, and on failure the log's last lines and the fix.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from stitcher import provision
from stitcher.config import WEAVIATE_VERSION
from stitcher.errors import ExitStatus
from tests.test_exit_codes import script_environment, stitcher_script

MODULES = 7

FAKE_GO = textwrap.dedent(
    """\
    #!/bin/sh
    case "$1" in
      env) echo "$FAKE_GOVERSION"; echo "$FAKE_GOPATH"; echo "$FAKE_GOPATH/pkg/mod" ;;
      version) exit 1 ;;
      install)
        i=0
        while [ $i -lt "$FAKE_MODULES" ]; do
          i=$((i + 1))
          echo "go: downloading example.com/module$i v0.0.0-20260414002931-afd174a4e478"
          sleep 0.05
        done
        if [ -n "$FAKE_FAIL" ]; then printf '%s\\n' "$FAKE_FAIL"; exit 1; fi
        if [ -n "$FAKE_LINK" ]; then ln -s "$FAKE_LINK" "$GOBIN/weaviate-server"; exit 0; fi
        printf '#!/bin/sh\\necho built\\n' > "$GOBIN/weaviate-server"
        chmod +x "$GOBIN/weaviate-server" ;;
    esac
    """
)


@pytest.fixture
def fake_go_env(tmp_path: Path) -> dict[str, str]:
    """The installed script's environment with a fake `go` first on PATH and an empty cache."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    go = bin_dir / "go"
    go.write_text(FAKE_GO)
    go.chmod(0o755)
    env = script_environment(
        PATH=f"{bin_dir}:/usr/bin:/bin",
        STITCHER_CACHE=str(tmp_path / "cache"),
        FAKE_GOVERSION="go1.26.1",
        FAKE_GOPATH=str(tmp_path / "gopath"),
        FAKE_MODULES=str(MODULES),
    )
    env.pop("STITCHER_WEAVIATE_BIN", None)
    env.pop("FAKE_FAIL", None)
    env.pop("FAKE_LINK", None)
    return env


def install(env: dict[str, str], *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(stitcher_script()), *options, "server", "install"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def log_file(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "logs" / f"weaviate-{WEAVIATE_VERSION}-install.log"


def binary(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "weaviate" / WEAVIATE_VERSION / "weaviate-server"


def test_install_in_a_log_prints_a_start_and_a_finish_line(
    fake_go_env: dict[str, str], tmp_path: Path
) -> None:
    done = install(fake_go_env)
    assert done.returncode == ExitStatus.OK, done.stderr
    assert done.stdout.strip() == str(binary(tmp_path))
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert lines[0].startswith(f"Building Weaviate {WEAVIATE_VERSION}")
    assert str(log_file(tmp_path)) in lines[0]
    assert lines[1].startswith(f"Weaviate {WEAVIATE_VERSION} installed at {binary(tmp_path)}")
    assert f"({MODULES} modules fetched)" in lines[1]
    assert "\r" not in done.stderr and "\x1b" not in done.stderr
    # Go's whole output is in the log, none of it on stderr.
    log = log_file(tmp_path).read_text()
    assert log.count("go: downloading") == MODULES
    assert "go: downloading" not in done.stderr
    # A second run finds the binary: nothing to say, nothing rebuilt.
    again = install(fake_go_env)
    assert (again.returncode, again.stderr, again.stdout) == (0, "", done.stdout)


def test_install_on_a_terminal_redraws_one_line(
    fake_go_env: dict[str, str], tmp_path: Path
) -> None:
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [str(stitcher_script()), "server", "install"],
            env={**fake_go_env, "TERM": "xterm"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=terminal,
        )
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=120) == 0
        assert process.stdout is not None
        process.stdout.close()
    finally:
        os.close(controller)
    shown = b"".join(chunks).decode()
    # The log file's name, the redrawn progress line, the finish line: three line feeds at most
    # however many modules were fetched (the progress line redraws with carriage returns).
    assert shown.count("\n") <= 3, shown
    assert f"{MODULES} modules fetched" in shown
    assert re.search(r"\b0:00:\d\d\b", shown), shown  # the elapsed time beside them
    assert "go: downloading" not in shown
    assert f"Weaviate {WEAVIATE_VERSION} installed at" in shown


@pytest.mark.parametrize(
    ("go_says", "fix"),
    [
        (
            'go: example.com/x@v1: Get "https://proxy.golang.org/x/@v/list": '
            "dial tcp: lookup proxy.golang.org: no such host",
            "the Go module proxy could not be reached",
        ),
        (
            "go: github.com/weaviate/weaviate@v1.38.11 requires go >= 1.26 "
            "(running go 1.24.1; GOTOOLCHAIN=local)",
            "the installed Go is too old",
        ),
        ("compile: something nobody foresaw", "see the log for the cause"),
    ],
)
def test_a_failed_install_shows_the_logs_end_and_the_fix(
    fake_go_env: dict[str, str], tmp_path: Path, go_says: str, fix: str
) -> None:
    done = install({**fake_go_env, "FAKE_FAIL": go_says})
    assert done.returncode == ExitStatus.FAILED
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert fix in errors[0] and str(log_file(tmp_path)) in errors[0]
    # The last lines of the log, indented, before the error line.
    assert f"  {go_says}" in done.stderr.splitlines()
    assert done.stderr.count("go: downloading") == min(MODULES, provision.TAIL_LINES - 1)
    assert go_says in log_file(tmp_path).read_text()
    assert not binary(tmp_path).exists()


def test_a_failed_install_shows_its_cause_even_when_quiet(
    fake_go_env: dict[str, str], tmp_path: Path
) -> None:
    done = install({**fake_go_env, "FAKE_FAIL": "compile: broken"}, "--quiet")
    assert done.returncode == ExitStatus.FAILED
    assert "  compile: broken" in done.stderr.splitlines()
    assert not done.stderr.startswith("Building")


def test_quiet_install_prints_only_the_path(fake_go_env: dict[str, str], tmp_path: Path) -> None:
    done = install(fake_go_env, "--quiet")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.strip() == str(binary(tmp_path))
    assert log_file(tmp_path).read_text().count("go: downloading") == MODULES


@pytest.mark.parametrize(
    ("goversion", "says"), [(None, "no `go` on PATH"), ("go1.25.7", "found go1.25.7")]
)
def test_missing_or_old_go_names_the_fix(
    fake_go_env: dict[str, str], tmp_path: Path, goversion: str | None, says: str
) -> None:
    env = dict(fake_go_env)
    if goversion is None:
        env["PATH"] = str(tmp_path / "empty")  # no go anywhere
    else:
        env["FAKE_GOVERSION"] = goversion
    done = install(env)
    assert done.returncode == ExitStatus.FAILED
    assert done.stderr.count("\n") == 1, done.stderr
    assert says in done.stderr and "https://go.dev/dl" in done.stderr
    assert not log_file(tmp_path).exists()


@pytest.mark.integration
@pytest.mark.parametrize("first_use", [["server", "start"], ["stats", "--json"]])
def test_the_first_use_of_the_local_server_builds_it(
    fake_go_env: dict[str, str], tmp_path: Path, first_use: list[str]
) -> None:
    # The fake build links the real binary into the empty cache, so the server that the
    # command then starts is a real Weaviate.
    real = provision.binary_path()
    if not real.is_file():
        pytest.fail(f"The Weaviate server binary is missing ({real})", pytrace=False)
    env = {**fake_go_env, "FAKE_LINK": str(real), "STITCHER_HOME": str(tmp_path / "home")}
    command = [str(stitcher_script()), *first_use]
    try:
        done = subprocess.run(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        subprocess.run(
            [str(stitcher_script()), "server", "stop"], env=env, capture_output=True, timeout=120
        )
    lines = done.stderr.splitlines()
    if first_use[0] == "stats":  # no collection yet: the server it started said so
        assert done.returncode == ExitStatus.FAILED and "does not exist" in lines[-1], lines
    else:
        assert done.returncode == ExitStatus.OK, done.stderr
    assert lines[0].startswith(f"Building Weaviate {WEAVIATE_VERSION}"), done.stderr
    assert str(log_file(tmp_path)) in lines[0]
    assert lines[1].startswith(f"Weaviate {WEAVIATE_VERSION} installed at {binary(tmp_path)}")
    assert "server install" not in done.stderr
    assert binary(tmp_path).resolve() == real.resolve()
