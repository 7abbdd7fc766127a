"""Issue 13 item 5: what the stitching overhead is made of, at each size (bench/scale.py's
corpus, server and queries).

    python bench/scale_overhead.py [--sizes 10000,100000] [--queries 200] [--json OUT]
        [--batch-size 1000 --async-indexing]     # the settings the 1M run of scale.py used

bench/scale.py reports stitched minus raw hybrid as one figure. A stitched search differs from
a raw one in two ways: it asks the hybrid query for CANDIDATES_PER_RESULT (3) times as many
hits (spares that fill the places of hits merged into one passage), and it widens the hits on
the client (stitcher.stitch.stitch_hits). This measures, per query and in rotating order:
raw with 5 hits, raw with 15 hits, stitched (3 candidates per result) and stitched with 2, and
times stitch_hits itself, so the part that could grow with the collection (the server's larger
answer) is told apart from the part that cannot (client-side widening of the same hits).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import scale
from common import log

#: name -> SearchOptions of each variant; None = stitched with 2 candidates per result.
VARIANTS: dict[str, dict[str, Any] | None] = {
    "raw5": {"stitch": False},
    "raw15": {"stitch": False, "limit": 15},
    "stitched3": {},
    "stitched2": None,
}
DIFFERENCES = (
    ("stitched3", "raw5"),
    ("raw15", "raw5"),
    ("stitched3", "raw15"),
    ("stitched2", "raw5"),
)


def run_variant(store: Any, name: str, query: str, vector: list[float]) -> float:
    import stitcher.search as search_module

    options = VARIANTS[name]
    if options is not None:
        return scale.timed_search(store, query, vector, **options)[0]
    search_module.CANDIDATES_PER_RESULT = 2
    try:
        return scale.timed_search(store, query, vector)[0]
    finally:
        search_module.CANDIDATES_PER_RESULT = 3


def measure(store: Any, data: scale.Corpus, size: int, args: argparse.Namespace) -> dict[str, Any]:
    import stitcher.search as search_module

    data.grow_to(size)
    scale.run_ingest(store, data.root, data.memo)
    # Queries are measured on a complete vector index, as in bench/scale.py.
    indexing_s = scale.wait_for_vector_queue(store._client) if args.async_indexing else 0.0
    copies = int(data._next // len(data.base)) + 1
    queries = scale.make_queries(data.base, copies, args.queries, args.seed + size)
    embedder = scale.SyntheticEmbedder()
    vectors = [embedder.embed_query(q) for q in queries]
    widening_ms: list[float] = []
    plain = search_module.stitch_hits

    def timed_stitch(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return plain(*a, **k)
        finally:
            widening_ms.append((time.perf_counter() - t0) * 1000)

    search_module.stitch_hits = timed_stitch  # type: ignore[assignment]
    names = list(VARIANTS)
    for i in range(min(10, len(queries))):  # warm-up
        for name in names:
            run_variant(store, name, queries[i], vectors[i])
    times: dict[str, list[float]] = {name: [] for name in names}
    widening_of_stitched3: list[float] = []
    for i, (query, vector) in enumerate(zip(queries, vectors, strict=True)):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            before = len(widening_ms)
            times[name].append(run_variant(store, name, query, vector))
            if name == "stitched3":
                widening_of_stitched3.extend(widening_ms[before:])
    search_module.stitch_hits = plain  # type: ignore[assignment]
    row: dict[str, Any] = {
        "size": size,
        "objects": store.count(),
        "queries": len(queries),
        "vector_index_wait_s": round(indexing_s, 1),
    }
    for name, values in times.items():
        row[name] = scale.summary_ms(values)
    for a, b in DIFFERENCES:
        row[f"{a} - {b}"] = scale.summary_ms(
            [x - y for x, y in zip(times[a], times[b], strict=True)]
        )
    row["client widening"] = scale.summary_ms(widening_of_stitched3)
    log(json.dumps(row))
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=500, help="objects per batch request")
    parser.add_argument("--async-indexing", action="store_true", help="as in bench/scale.py")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/stitcher-scale"))
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--json", type=Path, default=scale.RESULTS / "scale-overhead.json")
    args = parser.parse_args(argv)
    common.setup_environment()
    base = scale.base_corpus(args.cache, args.seed)
    root = args.cache / "scale-root" / "scale"
    shutil.rmtree(root.parent, ignore_errors=True)
    root.mkdir(parents=True)
    data = scale.Corpus(root, base)
    from stitcher.store.weaviate import WeaviateStore

    rows = []
    if args.async_indexing:
        scale._start_with_async_indexing()
    with common.temp_server() as bench:
        client = common.connect(bench)
        try:
            store = WeaviateStore(client, scale.COLLECTION, batch_size=args.batch_size)
            for size in [int(s) for s in args.sizes.split(",") if s]:
                rows.append(measure(store, data, size, args))
                common.write_json(
                    args.json,
                    {
                        "command": " ".join(sys.argv),
                        "batch_size": args.batch_size,
                        "async_indexing": args.async_indexing,
                        "rows": rows,
                    },
                )
        finally:
            client.close()
    shutil.rmtree(root.parent, ignore_errors=True)
    print(f"| chunks | {' | '.join(['p50 ms: ' + n for n in VARIANTS])} | widening p50 |")
    for r in rows:
        cells = " | ".join(f"{r[n]['p50']:.2f}" for n in VARIANTS)
        print(f"| {r['objects']} | {cells} | {r['client widening']['p50']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
