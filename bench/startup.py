"""Start-up of a fresh `stitcher search QUERY`, before and after a change, side by side.

    python bench/startup.py [--before REF] [--runs 9] [--query TEXT] [--json OUT]

What a user waits for at the prompt: a new process that imports the CLI, connects to the local
server (already running), opens the query model and prints the passages. The two versions run
in turn (before, after, before, after ...) against one temporary Weaviate holding `samples/`, so
a machine whose speed drifts (it is shared) slows both alike; the table gives each side's
median, minimum and maximum wall time and CPU seconds (user + system, from the kernel's
accounting of the finished child), and the median of the pairwise ratios after/before.

- "before" is the `stitcher` package of git REF (default `main`), "after" the working tree;
  both run through the same installed `stitcher` script and venv, picked by PYTHONPATH.
- Bytecode is compiled for both (a warm PYTHONPYCACHEPREFIX per side, as a normal install has),
  and two untimed warm-up runs per side precede the timed ones.
- Each side gets a cache of its own holding the ONNX export of the default model: "before" in
  the layout it had (weights inside model.onnx), "after" as the working tree converts it on its
  first search (weights beside it, in model.onnx.data).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, log, setup_environment, temp_server

COLLECTION = "StartupBench"
DEFAULT_QUERY = "how do birds navigate at night?"


def export_tree(ref: str, target: Path) -> Path:
    """The `stitcher` package as it is at git `ref`, unpacked under `target`."""
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "stitcher"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def model_caches(root: Path) -> dict[str, Path]:
    """One cache root per side, each holding the default model's ONNX export (see module doc)."""
    import onnx

    from stitcher.embed import export_onnx, onnx_export_dir, resolve_model

    model = resolve_model(None)
    source = onnx_export_dir(model) or export_onnx(model)
    caches = {}
    for side in ("before", "after"):
        cache = root / f"cache-{side}"
        copy = cache / "onnx" / source.name
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("model.onnx*"))
        # Both sides start from the inline layout of an export made before this change.
        inline = onnx.load(str(source / "model.onnx"))  # reads model.onnx.data when there is one
        onnx.save_model(inline, str(copy / "model.onnx"))
        caches[side] = cache
    return caches


def side_environment(tree: Path, cache: Path, pycache: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "STITCHER_CACHE": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    for name in ("WEAVIATE_URL", "WEAVIATE_API_KEY", "WEAVIATE_GRPC_PORT"):
        env.pop(name, None)  # the local server: what `stitcher search QUERY` uses by default
    return env


def run_once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one fresh process; fails loudly on an error."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"{command} failed ({done.returncode}):\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="main", help="git ref of the 'before' code")
    parser.add_argument("--runs", type=int, default=9, help="timed runs per side")
    parser.add_argument("--query", default=DEFAULT_QUERY)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    setup_environment()
    script = Path(sys.executable).with_name("stitcher")
    root = Path(tempfile.mkdtemp(prefix="stitcher-startup-"))
    try:
        trees = {"before": export_tree(args.before, root / "before"), "after": REPO}
        caches = model_caches(root)
        with temp_server() as bench:
            envs = {
                side: side_environment(trees[side], caches[side], root / f"pyc-{side}")
                for side in trees
            }
            log(f"ingesting samples/ into {COLLECTION}")
            ingest = [str(script), "ingest", str(REPO / "samples"), "--collection", COLLECTION]
            subprocess.run(ingest, env=envs["after"], check=True, capture_output=True)
            command = [str(script), "search", args.query, "--collection", COLLECTION]
            for side in trees:
                for _ in range(2):
                    run_once(command, envs[side])
            walls: dict[str, list[float]] = {side: [] for side in trees}
            cpus: dict[str, list[float]] = {side: [] for side in trees}
            loads = []
            for i in range(args.runs):
                for side in trees:
                    wall, cpu = run_once(command, envs[side])
                    walls[side].append(wall)
                    cpus[side].append(cpu)
                loads.append(os.getloadavg()[0])
                pair = f"before {walls['before'][-1]:.2f}s, after {walls['after'][-1]:.2f}s"
                log(f"run {i + 1}: {pair}")
            server_version = bench.version
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ratios = [a / b for a, b in zip(walls["after"], walls["before"], strict=True)]
    cpu_ratios = [a / b for a, b in zip(cpus["after"], cpus["before"], strict=True)]
    result: dict[str, Any] = {
        "command": f"stitcher search {args.query!r} --collection {COLLECTION}",
        "before": args.before,
        "runs": args.runs,
        "weaviate": server_version,
        "load_average": summary(loads),
        "wall_s": {side: summary(values) for side, values in walls.items()},
        "cpu_s": {side: summary(values) for side, values in cpus.items()},
        "ratio_after_before_wall": summary(ratios),
        "ratio_after_before_cpu": summary(cpu_ratios),
    }
    print(f"{args.runs} runs per side, load average {result['load_average']}")
    print("| code | wall median (min–max) | CPU user+sys median (min–max) |")
    print("|---|---|---|")
    for side in trees:
        w, c = result["wall_s"][side], result["cpu_s"][side]
        label = f"before (`{args.before}`)" if side == "before" else "after (working tree)"
        print(
            f"| {label} | {w['median']:.2f} s ({w['min']:.2f}–{w['max']:.2f}) "
            f"| {c['median']:.2f} s ({c['min']:.2f}–{c['max']:.2f}) |"
        )
    for figure in ("wall", "cpu"):
        r = result[f"ratio_after_before_{figure}"]
        spread = f"{r['median']:.2f} ({r['min']:.2f}–{r['max']:.2f})"
        print(f"{figure} after/before, pair by pair: median {spread}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
