"""A search served by the warm search worker against the same search in-process, side by side.

    python bench/warm_startup.py [--runs 7] [--query TEXT] [--json OUT]

What a user waits for at the prompt: a fresh `stitcher search QUERY --collection StartupBench`
(default panel output) against a temporary local server holding `samples/`. The in-process
search (`--no-warm`) and the one the worker answers (`--warm`, after a first search started the
worker) run in turn, so a machine whose speed drifts (it is shared) slows both alike. Both use
the working tree, compiled bytecode (a warm PYTHONPYCACHEPREFIX, two untimed warm-up runs) and
the same ONNX export. CPU = user + system seconds of the finished command process, from the
kernel (the worker's own CPU is not in it: it is the point of the worker that this work was
done before). The worker's count of searches served is checked to have grown by exactly the
number of `--warm` runs, so none of them silently ran in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, log, setup_environment, temp_server
from startup import run_once, summary

COLLECTION = "StartupBench"
DEFAULT_QUERY = "how do birds navigate at night?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per side")
    parser.add_argument("--query", default=DEFAULT_QUERY)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    setup_environment()
    from stitcher import warm

    script = Path(sys.executable).with_name("stitcher")
    root = Path(tempfile.mkdtemp(prefix="stitcher-warm-bench-"))
    sides = ("in-process", "worker")
    walls: dict[str, list[float]] = {side: [] for side in sides}
    cpus: dict[str, list[float]] = {side: [] for side in sides}
    loads: list[float] = []
    try:
        with temp_server() as bench:
            env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONPYCACHEPREFIX": str(root / "pyc")}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            for name in ("WEAVIATE_URL", "WEAVIATE_API_KEY", "WEAVIATE_GRPC_PORT", "STITCHER_WARM"):
                env.pop(name, None)  # the local server, as `stitcher search QUERY` uses it
            log(f"ingesting samples/ into {COLLECTION}")
            ingest = [str(script), "ingest", str(REPO / "samples"), "--collection", COLLECTION]
            subprocess.run(ingest, env=env, check=True, capture_output=True)
            search = [str(script), "search", args.query, "--collection", COLLECTION]
            commands = {"in-process": [*search, "--no-warm"], "worker": [*search, "--warm"]}
            for _ in range(2):
                run_once(commands["in-process"], env)
            run_once(commands["worker"], env)  # in-process, and starts the worker
            deadline = time.monotonic() + 300
            while warm.status(bench.home) is None:
                if time.monotonic() > deadline:
                    raise SystemExit("the worker did not start")
                time.sleep(0.2)
            run_once(commands["worker"], env)  # waits for the warm-up, if still going
            served_before = (warm.status(bench.home) or {})["served"]
            for i in range(args.runs):
                for side in sides:
                    wall, cpu = run_once(commands[side], env)
                    walls[side].append(wall)
                    cpus[side].append(cpu)
                loads.append(os.getloadavg()[0])
                pair = ", ".join(f"{side} {walls[side][-1]:.2f}s" for side in sides)
                log(f"run {i + 1}: {pair}")
            served = (warm.status(bench.home) or {})["served"] - served_before
            if served != args.runs:
                raise SystemExit(f"the worker served {served} of {args.runs} --warm runs")
            warm.stop_worker(bench.home)
            server_version = bench.version
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result: dict[str, Any] = {
        "command": f"stitcher search {args.query!r} --collection {COLLECTION} [--no-warm|--warm]",
        "runs": args.runs,
        "weaviate": server_version,
        "load_average": summary(loads),
        "wall_s": {side: summary(values) for side, values in walls.items()},
        "cpu_s": {side: summary(values) for side, values in cpus.items()},
    }
    print(f"{args.runs} runs per side, load average {result['load_average']}")
    print("| search | wall median (min–max) | CPU user+sys median (min–max) |")
    print("|---|---|---|")
    for side in sides:
        w, c = result["wall_s"][side], result["cpu_s"][side]
        print(
            f"| {side} | {w['median']:.2f} s ({w['min']:.2f}–{w['max']:.2f}) "
            f"| {c['median']:.2f} s ({c['min']:.2f}–{c['max']:.2f}) |"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
