"""Issue 15: ingest and query speed of two embedding models, side by side in one run.

    python bench/model_speed.py [--models MODEL_A,MODEL_B] [--rounds 3] [--queries 40]
                                [--json OUT]

The question benchmark's corpus (bench/questions.py) is too large to ingest twice per round on
shared cores, so this takes a slice of it (the twelve coreutils man pages, English and Chinese,
and the first chapter of the Debian FAQ in each language: a few hundred chunks) and, in each
round, for each model in turn (the order rotated every round, since other jobs change the
machine's speed from minute to minute):

- `Stitcher.ingest` of the slice into a fresh collection with that model: chunks per second of
  wall time and of this process's CPU time (embedding runs in this process; Weaviate's CPU is
  another process's and nearly the same for both models);
- the first QUERIES questions of the benchmark (English and Chinese alternating) through
  `Stitcher.search(q, limit=5)` with stitcher's automatic alpha: wall p50/p95 per query; each
  query also runs with alpha 0.5, alternating which goes first, for the automatic rule's cost.

Each model is loaded and used once before the first round (an untimed ingest of one man page and
one query), so model loading counts in neither figure. The ratios are taken per round (the two
models ran minutes apart at most) and their median reported.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import questions as qb
import textforms_corpus
from common import log, percentile

DEFAULT_MODELS = "sentence-transformers/all-MiniLM-L6-v2,multilingual-e5-small"
#: The slice of the question corpus: (folder under the corpus, glob).
SLICE = (
    ("en/man", "*.txt"),
    ("zh/man", "*.txt"),
    ("en/debian-faq", "basic-defs.en.html"),
    ("zh/debian-faq", "basic-defs.zh-cn.html"),
)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def make_slice(corpus: Path, target: Path) -> list[str]:
    copied = []
    for folder, pattern in SLICE:
        files = sorted((corpus / folder).glob(pattern))
        if not files:
            raise SystemExit(f"nothing matches {corpus / folder / pattern}")
        for path in files:
            dest = target / folder / path.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
            copied.append(f"{folder}/{path.name}")
    return copied


def pick_queries(count: int) -> list[str]:
    en = [q.question for q in qb.load_questions(qb.QUESTIONS, ["en"])]
    zh = [q.question for q in qb.load_questions(qb.QUESTIONS, ["zh"])]
    mixed = [q for pair in zip(en, zh, strict=False) for q in pair]
    return mixed[:count]


def one_model(
    bench: Any, model: str, collection: str, slice_dir: Path, queries: list[str]
) -> dict[str, Any]:
    from stitcher import Stitcher

    with Stitcher(bench.url, bench.api_key, collection, grpc_port=bench.grpc_port) as s:
        cpu0, wall0 = cpu_seconds(), time.perf_counter()
        s.ingest([str(slice_dir)], model=model)
        wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
        chunks = s.stats()["chunks"]
        # Each query with the automatic alpha and with a fixed 0.5, in alternating order: the
        # automatic rule's own cost (script shares, the tokenizer's [UNK] count) side by side.
        took: list[float] = []
        fixed: list[float] = []
        for i, query in enumerate(queries):
            runs = [(took, None), (fixed, 0.5)]
            for sink, alpha in runs if i % 2 == 0 else runs[::-1]:
                started = time.perf_counter()
                s.search(query, limit=5, alpha=alpha)
                sink.append((time.perf_counter() - started) * 1000)
        s.drop()
    return {
        "model": model,
        "chunks": chunks,
        "ingest_s": round(wall, 2),
        "ingest_cpu_s": round(cpu, 2),
        "chunks_per_s": round(chunks / wall, 2),
        "chunks_per_cpu_s": round(chunks / cpu, 2),
        "query_p50_ms": round(percentile(took, 50), 1),
        "query_p95_ms": round(percentile(took, 95), 1),
        "query_ms": [round(t, 1) for t in took],
        "alpha05_p50_ms": round(percentile(fixed, 50), 1),
        "auto_over_fixed_p50": round(percentile(took, 50) / percentile(fixed, 50), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        default=DEFAULT_MODELS,
        help="two models, comma-separated (';'-separated when a by-script name holds commas)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--cache", type=Path, default=textforms_corpus.default_cache())
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    common.setup_environment()
    models = [m for m in args.models.split(";" if ";" in args.models else ",") if m.strip()]
    corpus = qb.build_corpus(args.cache)
    queries = pick_queries(args.queries)
    tmp = Path(tempfile.mkdtemp(prefix="stitcher-model-speed-"))
    results: dict[str, Any] = {
        "command": "python bench/model_speed.py " + " ".join(argv or sys.argv[1:]),
        "commit": qb.git_commit(),
        "machine": common.machine_info(),
        "queries": queries,
        "rounds": [],
    }
    try:
        slice_dir = tmp / "slice"
        results["slice"] = make_slice(corpus, slice_dir)
        warm_dir = tmp / "warm"
        make_slice(corpus, warm_dir)
        for extra in list(warm_dir.rglob("*")):
            if extra.is_file() and extra.name != "du.1.txt":
                extra.unlink()
        with common.temp_server() as bench:
            for i, model in enumerate(models):
                log(f"warm-up {model}")
                one_model(bench, model, f"SpeedWarm{i}", warm_dir, queries[:2])
            for r in range(args.rounds):
                order = models[r % len(models) :] + models[: r % len(models)]
                row = {}
                for model in order:
                    m = one_model(
                        bench, model, f"Speed{models.index(model)}R{r}", slice_dir, queries
                    )
                    log(
                        f"round {r} {model}: {m['chunks']} chunks, {m['chunks_per_s']} chunks/s "
                        f"({m['chunks_per_cpu_s']} per CPU s), query p50 {m['query_p50_ms']} ms, "
                        f"at alpha 0.5 {m['alpha05_p50_ms']} ms"
                    )
                    row[model] = m
                results["rounds"].append(row)
                results.setdefault("load", []).append([round(v, 2) for v in os.getloadavg()])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base, other = models[0], models[1]

    def ratios(key: str) -> list[float]:
        return [round(row[other][key] / row[base][key], 3) for row in results["rounds"]]

    results["ratios"] = {
        key: {"per_round": ratios(key), "median": statistics.median(ratios(key))}
        for key in ("chunks_per_s", "chunks_per_cpu_s", "query_p50_ms", "query_p95_ms")
    }
    results["auto_over_fixed_p50"] = {
        model: statistics.median(row[model]["auto_over_fixed_p50"] for row in results["rounds"])
        for model in models
    }
    log(f"{other} / {base}: {json.dumps(results['ratios'])}")
    log(f"automatic alpha / alpha 0.5, query p50: {json.dumps(results['auto_over_fixed_p50'])}")
    common.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
