"""`stitcher doctor` through the installed script: one line per check, exit 0 unless one fails."""

from __future__ import annotations

import json
import re
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.doctor import Check, exit_status
from stitcher.errors import ExitStatus
from tests.test_exit_codes import run_stitcher, script_environment
from tests.test_ingest import EN


def doctor_json(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Check]]:
    done = run_stitcher("doctor", "--json", *args, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    checks = [
        Check(c["check"], c["status"], c["detail"], c["fix"]) for c in json.loads(done.stdout)
    ]
    by_name = {c.name: c for c in checks}
    assert len(by_name) == len(checks)  # one line per check
    return done.returncode, by_name


def line_of(stdout: str, name: str) -> str:
    pattern = re.compile(rf"^(ok|warn|fail) +{re.escape(name)}  ")
    matches = [line for line in stdout.splitlines() if pattern.match(line)]
    assert len(matches) == 1, stdout
    return matches[0]


def test_exit_status_is_1_only_when_a_check_fails() -> None:
    ok, warn, fail = (Check("x", s, "d") for s in ("ok", "warn", "fail"))  # type: ignore[arg-type]
    assert exit_status([ok, warn]) == ExitStatus.OK
    assert exit_status([ok, warn, fail]) == ExitStatus.FAILED


@pytest.fixture(scope="module")
def ingested(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("doctor") / "notes"
    folder.mkdir()
    (folder / "en.txt").write_text(EN, encoding="utf-8")
    name = f"Doctor{uuid.uuid4().hex[:8]}"
    done = run_stitcher("ingest", str(folder), "-c", name)
    assert done.returncode == 0, done.stderr
    return name


def test_a_healthy_setup_is_0(weaviate_server: Any, ingested: str) -> None:
    code, checks = doctor_json()
    assert code == ExitStatus.OK, checks
    assert not [c for c in checks.values() if c.status == "fail"]
    for name in ("go", "server binary", "model", "key file", "disk", "server"):
        assert checks[name].status == "ok", checks[name]
    assert f"Weaviate {weaviate_server.version} at {weaviate_server.url}" in checks["server"].detail
    mine = checks[f"collection {ingested}"]
    assert mine.status == "ok" and "1 documents" in mine.detail
    # The human form: the same checks, one line each.
    text = run_stitcher("doctor")
    assert text.returncode == ExitStatus.OK
    assert len(text.stdout.splitlines()) == len(checks)
    assert line_of(text.stdout, "server").startswith("ok")


def test_other_chunk_settings_than_a_collections_warn(weaviate_server: Any, ingested: str) -> None:
    code, checks = doctor_json("-c", ingested, "--chunk-size", "300")
    assert code == ExitStatus.OK
    mine = checks[f"collection {ingested}"]
    assert mine.status == "warn" and "chunk_size: 250 (collection) != 300" in mine.detail
    assert [name for name in checks if name.startswith("collection")] == [f"collection {ingested}"]


def test_a_wrong_api_key_is_1(weaviate_server: Any) -> None:
    done = run_stitcher(
        "doctor",
        "--url",
        weaviate_server.url,
        "--grpc-port",
        str(weaviate_server.grpc_port),
        "--api-key",
        "not-the-key",
    )
    assert done.returncode == ExitStatus.FAILED, done.stdout
    server = line_of(done.stdout, "server")
    assert server.startswith("fail") and "fix: pass the server's key" in server


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_stopped_server_is_1() -> None:
    done = run_stitcher("doctor", "--url", f"http://127.0.0.1:{_closed_port()}")
    assert done.returncode == ExitStatus.FAILED, done.stdout
    server = line_of(done.stdout, "server")
    # The checks name settings; the command spells them as its own flags.
    assert (
        server.startswith("fail") and "fix: start the server or fix --url / --grpc-port" in server
    )
    # Checks of the local setup that a remote server does not need are not failures.
    assert line_of(done.stdout, "key file").startswith("ok")
    assert "not used (--url)" in line_of(done.stdout, "key file")


@pytest.mark.parametrize(("mode", "status"), [(0o600, "ok"), (0o640, "warn"), (0o644, "fail")])
def test_key_file_permissions(tmp_path: Path, mode: int, status: str) -> None:
    key = tmp_path / "api-key"
    key.write_text("secret\n")
    key.chmod(mode)
    code, checks = doctor_json(env=script_environment(STITCHER_HOME=str(tmp_path)))
    assert checks["key file"].status == status, checks["key file"]
    assert checks["server"].status == "warn"  # nothing runs in this home; not a failure
    if status != "ok":
        assert checks["key file"].fix == f"chmod 600 {key}"
    assert code == (ExitStatus.FAILED if status == "fail" else ExitStatus.OK)


def test_a_fresh_machine_without_go_names_each_fix(tmp_path: Path) -> None:
    """No Go on PATH, nothing built, no ONNX export, no Go module cache: each one line."""
    env = script_environment(
        PATH=str(tmp_path / "empty"),
        STITCHER_HOME=str(tmp_path / "home"),
        STITCHER_CACHE=str(tmp_path / "cache"),
    )
    env.pop("STITCHER_WEAVIATE_BIN", None)
    code, checks = doctor_json(env=env)
    assert code == ExitStatus.FAILED
    assert checks["go"].status == "fail" and "https://go.dev/dl" in checks["go"].fix
    binary = checks["server binary"]
    assert binary.status == "fail" and str(tmp_path / "cache") in binary.detail
    assert "stitcher server install" in binary.fix
    dictionaries = checks["chinese dictionaries"]
    assert dictionaries.status == "warn" and "go mod download" in dictionaries.fix
    assert checks["model"].status == "ok"  # the packaged model needs no cache
    assert checks["onnx export"].status == "warn"
    assert checks["onnx export"].fix == "`stitcher model export`"


def test_an_old_go_and_a_missing_model_fail(tmp_path: Path) -> None:
    from tests.test_provision import FAKE_GO

    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "go").write_text(FAKE_GO)
    (fake_bin / "go").chmod(0o755)
    env = script_environment(
        PATH=f"{fake_bin}:/usr/bin:/bin",
        STITCHER_HOME=str(tmp_path / "home"),
        STITCHER_CACHE=str(tmp_path / "cache"),
        FAKE_GOVERSION="go1.25.7",
        FAKE_GOPATH=str(tmp_path / "gopath"),
    )
    env.pop("STITCHER_WEAVIATE_BIN", None)
    code, checks = doctor_json("--model", str(tmp_path / "no-model"), env=env)
    assert code == ExitStatus.FAILED
    assert checks["go"].status == "fail" and "go 1.25 is older than 1.26" in checks["go"].detail
    assert checks["model"].status == "fail" and "--model PATH" in checks["model"].fix
    assert "onnx export" not in checks  # nothing to export without a model


@pytest.mark.parametrize(
    ("free", "status"), [(50 * 2**20, "fail"), (500 * 2**20, "warn"), (5 * 2**30, "ok")]
)
def test_free_disk_under_the_data_path(
    free: int, status: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from stitcher import doctor

    monkeypatch.setenv("STITCHER_HOME", str(tmp_path))
    seen: list[str] = []

    def usage(path: object) -> Any:
        seen.append(str(path))
        return shutil._ntuple_diskusage(10 * 2**30, 10 * 2**30 - free, free)  # type: ignore[attr-defined]

    monkeypatch.setattr(doctor.shutil, "disk_usage", usage)
    check = doctor.check_disk(local=True)
    assert check.status == status, check
    assert seen == [str(tmp_path)]  # data/ does not exist yet: its nearest existing parent
    if status != "ok":
        assert "STITCHER_HOME" in (check.fix or "")
