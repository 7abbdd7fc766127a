"""Issue 4: ingest throughput on a real corpus, side by side in one run, one server, one model.

    python bench/ingest_bench.py [--chunks 1500] [--zh-share 0.5] [--corpus DIR] [--json OUT]

Measures, in one process, after loading the model and one unmeasured encode of every chunk
(torch prepares its CPU kernels per input shape, so whichever run came first paid for that: in
a first try the cold raw encode was ~1.5x slower than the same encode at the end, though the
machine's load differed too):

- raw `SentenceTransformer.encode` over exactly the chunk texts stitcher stores (loaded and
  split as `stitcher ingest` does), one call, the same batch size;
- `Stitcher(url=...).ingest([dir])` into a fresh collection (load, chunk, segment, embed,
  write);
- the seed's way (seed 003): RecursiveCharacterTextSplitter(250, 50) with default separators,
  uuid4 ids, a parent_id chain, `WeaviateVectorStore.from_documents`, same model;

in `--rounds` rounds (default 3), the order rotated each round, so each ratio compares runs
minutes apart (other jobs on this shared machine change its speed by up to 1.5x). Then:

- stitcher again over the unchanged directory (nothing may be embedded), in this process and
  as fresh `stitcher ingest` processes (with and without a bytecode cache);
- stitcher's ingest with the model replaced by random vectors (everything but embedding).

Targets (issue 4): stitcher ingest >= 0.9x the raw encode rate; the unchanged re-run >= 50x
faster than the first run. Every phase also records the CPU used by this process, by the
Weaviate server and by all other processes (the machine is shared).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
from common import log

STITCHER_COLLECTION = "BenchIngest"
SEED_COLLECTION = "BenchSeedIngest"
OVERHEAD_COLLECTION = "BenchIngestOverhead"


class RandomEmbedder:
    """Stands in for the model: random unit-free vectors, microseconds per chunk."""

    def __init__(self, dimension: int) -> None:
        import numpy as np

        self.dimension = dimension
        self._rng = np.random.default_rng(0)

    def embed_documents(self, texts: Any) -> list[list[float]]:
        return self._rng.standard_normal((len(texts), self.dimension)).astype("float32").tolist()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1500, help="chunks in the subset (about)")
    parser.add_argument(
        "--zh-share", type=float, default=0.5, help="share of the chunks from Chinese documents"
    )
    parser.add_argument("--corpus", type=Path, default=common.DEFAULT_CORPUS)
    parser.add_argument("--json", type=Path, default=None, help="write all results here")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=20261202, help="random seed of the subset")
    parser.add_argument("--no-seed-way", action="store_true", help="skip the seed's from_documents")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of raw / stitcher / seed, order rotated"
    )
    parser.add_argument("--fresh-reruns", type=int, default=3, help="fresh-process re-runs")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.setup_environment()
    started = time.perf_counter()
    info = common.machine_info()
    log(f"machine: {info['cpus']} cores, load {info['load_at_start']}")
    manifest = common.ensure_corpus(args.corpus)

    zh_budget = round(args.chunks * args.zh_share)
    en_budget = args.chunks - zh_budget
    budgets = {
        common.ZH_GROUPS[0]: round(zh_budget * 0.7),
        common.ZH_GROUPS[1]: zh_budget - round(zh_budget * 0.7),
        common.EN_GROUPS[0]: en_budget // 2,
        common.EN_GROUPS[1]: en_budget - en_budget // 2,
    }
    docs = common.select_documents(args.corpus, budgets, seed=args.seed)
    described = common.corpus_description(docs)
    for group, row in described.items():
        log(f"{group}: {row['documents']} documents, {row['chunks']} chunks, {row['chars']} chars")

    phases: list[common.PhaseStats] = []
    results: dict[str, Any] = {
        "machine": info,
        "corpus": {
            "path": str(args.corpus),
            "manifest_groups": manifest.get("groups"),
            "selection": described,
            "seed": args.seed,
        },
        "batch_size": args.batch_size,
    }
    with tempfile.TemporaryDirectory(prefix="stitcher-bench-subset-") as tmp:
        subset = common.materialise(docs, Path(tmp) / "corpus")
        with common.temp_server() as bench:
            results["server"] = {"version": bench.version}
            run_all(args, bench, subset, phases, results)
    results["phases"] = [p.to_json() for p in phases]
    results["total_s"] = round(time.perf_counter() - started, 1)
    print_report(results)
    common.write_json(args.json, results)
    return 0


def chunk_texts(subset: Path) -> list[str]:
    """The chunk texts `stitcher ingest` will embed, in its order (same loader, same split)."""
    from stitcher.chunking import split
    from stitcher.loaders import discover, load

    texts: list[str] = []
    for src in discover([str(subset)]).files:
        texts.extend(c.text for c in split(load(src).text, 250, 50))
    return texts


def run_all(
    args: argparse.Namespace,
    bench: common.BenchServer,
    subset: Path,
    phases: list[common.PhaseStats],
    results: dict[str, Any],
) -> None:
    from stitcher import Stitcher
    from stitcher.embed import (
        SentenceTransformerEmbedder,
        export_onnx,
        load_sentence_transformer,
        resolve_model,
    )
    from stitcher.embed.st import embedding_dimension
    from stitcher.ingest import IngestOptions
    from stitcher.ingest import ingest as run_ingest

    pid = bench.pid
    model_ref = resolve_model(None)
    with common.phase("model load", pid, phases):
        model = load_sentence_transformer(model_ref)
    # The first stitcher ingest exports the model to ONNX when no export exists yet; do it now
    # so that one-time cost is not charged to the timed ingest.
    export_onnx(model_ref)

    texts = chunk_texts(subset)
    n = len(texts)
    zh = sum(1 for t in texts if sum("\u4e00" <= ch <= "\u9fff" for ch in t) >= 20)
    results["chunks"] = {"stitcher": n, "with_20_han": zh}
    log(f"{n} chunks ({zh} with >= 20 Han characters), mean {sum(map(len, texts)) / n:.0f} chars")

    with common.phase("warm-up (every chunk once, unmeasured)", pid, phases):
        model.encode(texts, batch_size=args.batch_size, show_progress_bar=False)

    options = IngestOptions(batch_size=args.batch_size)
    paths = sorted(subset.rglob("*.txt"))
    seed_embeddings = common.langchain_embeddings(
        SentenceTransformerEmbedder(model_ref, batch_size=args.batch_size)
    )
    rounds: list[dict[str, Any]] = []
    summaries: dict[str, Any] = {}

    def raw(r: int) -> dict[str, Any]:
        with common.phase(f"round {r}: raw encode", pid, phases) as p:
            model.encode(
                texts, batch_size=args.batch_size, convert_to_numpy=True, show_progress_bar=False
            )
        return {"chunks": n, "phase": p}

    def stitcher(r: int) -> dict[str, Any]:
        name = f"{STITCHER_COLLECTION}{r}"
        with (
            common.phase(f"round {r}: stitcher ingest", pid, phases) as p,
            Stitcher(bench.url, bench.api_key, name, grpc_port=bench.grpc_port) as s,
        ):
            summary = s.ingest([str(subset)], options=options)
        summaries[f"round {r}"] = summary.to_json()
        if summary.failed or summary.unreadable or summary.embedded != n:
            log(f"WARNING: stitcher ingest: {summary.one_line()}")
        return {"chunks": summary.chunks_written, "phase": p, "collection": name}

    def seed(r: int) -> dict[str, Any]:
        name = f"{SEED_COLLECTION}{r}"
        client = common.connect(bench)
        try:
            with common.phase(f"round {r}: seed from_documents", pid, phases) as p:
                chunks = common.seed_ingest(client, paths, subset, seed_embeddings, name)
            stored = common.count_objects(client, name)
        finally:
            client.close()
        if stored != chunks:
            log(f"WARNING: the seed's way stored {stored} of {chunks} chunks")
        return {"chunks": chunks, "phase": p, "stored": stored}

    methods = {"raw encode": raw, "stitcher ingest": stitcher}
    if not args.no_seed_way:
        methods["seed from_documents"] = seed
    names = list(methods)
    for r in range(1, args.rounds + 1):
        # Rotate the order so that no method always runs first or last in a round.
        order = names[(r - 1) % len(names) :] + names[: (r - 1) % len(names)]
        rounds.append({name: methods[name](r) for name in order} | {"order": order})

    # The unchanged re-run, over round 1's collection.
    first_collection = rounds[0]["stitcher ingest"]["collection"]
    with (
        common.phase("stitcher re-run, unchanged (same process)", pid, phases) as second,
        Stitcher(bench.url, bench.api_key, first_collection, grpc_port=bench.grpc_port) as s,
    ):
        again = s.ingest([str(subset)], options=options)
    summaries["re-run"] = again.to_json()
    if again.embedded or again.chunks_written or again.added or again.updated:
        log(f"WARNING: unchanged re-run did work: {again.one_line()}")
    fresh = fresh_reruns(args, bench, subset, first_collection)

    # Everything but the model: the same ingest with embeddings that cost nothing to compute.
    with (
        common.phase("stitcher ingest, embedding replaced (overhead only)", pid, phases) as bare,
        Stitcher(bench.url, bench.api_key, OVERHEAD_COLLECTION, grpc_port=bench.grpc_port) as s,
    ):
        bare_summary = run_ingest(
            s.store,
            [str(subset)],
            model_name=model_ref.name,
            embedder=lambda: RandomEmbedder(embedding_dimension(model)),
            options=options,
        )
    summaries["overhead_only"] = bare_summary.to_json()

    table = []
    for r, round_ in enumerate(rounds, 1):
        row: dict[str, Any] = {"round": r, "order": round_["order"]}
        for name in names:
            p = round_[name]["phase"]
            row[name] = {
                "chunks": round_[name]["chunks"],
                "wall_s": round(p.wall_s, 2),
                "chunks_per_s": round(round_[name]["chunks"] / p.wall_s, 2),
                "own_cpu_s": round(p.own_cpu_s, 1),
                "server_cpu_s": round(p.server_cpu_s, 1),
                "other_cores": round(p.other_cores, 2),
            }
        row["stitcher_vs_raw"] = round(
            row["stitcher ingest"]["chunks_per_s"] / row["raw encode"]["chunks_per_s"], 3
        )
        if "seed from_documents" in row:
            row["seed_vs_raw"] = round(
                row["seed from_documents"]["chunks_per_s"] / row["raw encode"]["chunks_per_s"], 3
            )
        table.append(row)
    results["rounds"] = table
    results["summaries"] = summaries

    def pooled(name: str) -> float:
        return sum(t[name]["chunks"] for t in table) / sum(t[name]["wall_s"] for t in table)

    first_runs = [t["stitcher ingest"]["wall_s"] for t in table]
    results["pooled_chunks_per_s"] = {name: round(pooled(name), 2) for name in names}
    results["ratios"] = {
        "stitcher_vs_raw_median_of_rounds": statistics.median(t["stitcher_vs_raw"] for t in table),
        "stitcher_vs_raw_pooled": round(pooled("stitcher ingest") / pooled("raw encode"), 3),
        "first_run_s_median": statistics.median(first_runs),
        "rerun_same_process_s": round(second.wall_s, 3),
        "first_vs_rerun_same_process": round(statistics.median(first_runs) / second.wall_s, 1),
        **{
            f"first_vs_rerun_fresh_process_{mode}": round(
                statistics.median(first_runs) / statistics.median(t), 1
            )
            for mode, t in fresh.items()
        },
        "overhead_only_s": round(bare.wall_s, 2),
        "overhead_ms_per_chunk": round(1000 * bare.wall_s / n, 2),
    }
    if "seed from_documents" in names:
        results["ratios"]["seed_vs_raw_median_of_rounds"] = statistics.median(
            t["seed_vs_raw"] for t in table
        )
        results["ratios"]["seed_vs_raw_pooled"] = round(
            pooled("seed from_documents") / pooled("raw encode"), 3
        )
        results["chunks"]["seed"] = table[0]["seed from_documents"]["chunks"]
    results["fresh_process_reruns_s"] = fresh


def fresh_reruns(
    args: argparse.Namespace, bench: common.BenchServer, subset: Path, collection: str
) -> dict[str, list[float]]:
    """Wall time of `stitcher ingest` over the unchanged directory, each in a new process:
    as this venv is (no .pyc files), and with a warm bytecode cache."""
    exe = common.stitcher_exe()
    if not exe.exists():
        log(f"no {exe}: skipping the fresh-process re-runs")
        return {}
    command = [
        str(exe),
        "ingest",
        str(subset),
        "--collection",
        collection,
        "--url",
        bench.url,
        "--grpc-port",
        str(bench.grpc_port),
        "--json",
    ]
    out: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="stitcher-bench-pycache-") as pycache:
        for mode, prefix in (("no_pyc", None), ("pyc_cache", Path(pycache))):
            env = common.cli_environment(bench, prefix)
            if prefix is not None:
                subprocess.run(command, env=env, capture_output=True, check=False)  # fills it
            times = []
            for _ in range(args.fresh_reruns):
                t0 = time.perf_counter()
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
                times.append(round(time.perf_counter() - t0, 3))
                if done.returncode != 0 or '"embedded": 0' not in done.stdout:
                    log(f"WARNING: fresh re-run exit {done.returncode}: {done.stderr[-300:]}")
            out[mode] = times
            log(f"fresh-process re-runs ({mode}): {times}")
    return out


def print_report(results: dict[str, Any]) -> None:
    rows = []
    for t in results["rounds"]:
        for name in ("raw encode", "stitcher ingest", "seed from_documents"):
            if name not in t:
                continue
            m = t[name]
            ratio = m["chunks_per_s"] / t["raw encode"]["chunks_per_s"]
            rows.append(
                [
                    t["round"],
                    t["order"].index(name) + 1,
                    name,
                    m["chunks"],
                    f"{m['wall_s']:.1f}",
                    f"{m['chunks_per_s']:.2f}",
                    f"{ratio:.2f}x",
                    f"{m['own_cpu_s']:.0f}",
                    f"{m['server_cpu_s']:.0f}",
                    f"{m['other_cores']:.2f}",
                ]
            )
    print(
        common.markdown_table(
            [
                "round",
                "position",
                "run",
                "chunks",
                "seconds",
                "chunks/s",
                "vs raw (same round)",
                "own CPU s",
                "server CPU s",
                "other processes (cores)",
            ],
            rows,
        )
    )
    print()
    phases = {p["name"]: p for p in results["phases"]}
    n = results["chunks"]["stitcher"]
    extra = []
    second = phases["stitcher re-run, unchanged (same process)"]
    extra.append(
        [
            "stitcher re-run, unchanged, same process",
            f"{second['wall_s']:.2f}",
            f"{results['ratios']['first_vs_rerun_same_process']}x",
        ]
    )
    labels = {"no_pyc": "no .pyc, as this venv is", "pyc_cache": "warm bytecode cache"}
    for mode, times in (results.get("fresh_process_reruns_s") or {}).items():
        extra.append(
            [
                f"stitcher re-run, unchanged, fresh `stitcher ingest` process ({labels[mode]}, "
                f"median of {len(times)})",
                f"{statistics.median(times):.2f}",
                f"{results['ratios'][f'first_vs_rerun_fresh_process_{mode}']}x",
            ]
        )
    bare = phases["stitcher ingest, embedding replaced (overhead only)"]
    extra.append(
        [
            f"stitcher ingest with random vectors instead of the model ({n} chunks)",
            f"{bare['wall_s']:.2f}",
            "–",
        ]
    )
    print(common.markdown_table(["run", "seconds", "first run / this"], extra))
    print()
    for key, value in results["ratios"].items():
        print(f"{key}: {value}")
    print(f"pooled chunks/s: {results['pooled_chunks_per_s']}")
    print(f"total {results['total_s']} s")


if __name__ == "__main__":
    sys.exit(main())
