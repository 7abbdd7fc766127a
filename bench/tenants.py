"""Issue 13 item 6: many knowledge bases, Weaviate tenants in one collection against one
collection per knowledge base.

    nice -n 10 python bench/tenants.py [--kbs 1000] [--chunks 1000] [--queries 200] [--json OUT]

Two temporary Weaviates (single node each, both running while queries are timed, so the query
numbers of the two layouts are measured side by side, alternating):

- "tenants": one multi-tenant collection, one tenant per knowledge base (`--tenant`);
- "collections": one collection per knowledge base (the seeds' `index_{knowledge_id}`).

Each knowledge base gets `--chunks` chunks of real text (the system's licence texts under
/usr/share/common-licenses and this repository's English and Chinese samples, split 250/50 by
stitcher; every knowledge base holds a different window of them, so the same document appears in
many knowledge bases under the same relative path, as in a real deployment) with synthetic vectors
(bench/scale.py's seeded random unit vector per chunk text, 384 dimensions): no model runs, so the
numbers are Weaviate's and stitcher's own. Loading goes through `WeaviateStore.create` and
`WeaviateStore.write`, exactly what a first `stitcher ingest` does after loading and embedding.

Reported per layout: creation + load time (all knowledge bases, one after the other), server RSS
(VmRSS) and disk after loading, query p50/p95 of raw hybrid and stitched search on random
knowledge bases (the same queries on both sides, alternating which side goes first); for the
tenants, RSS again after deactivating all but a tenth of the tenants, and the first (activating)
search on a deactivated tenant.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
from common import log
from scale import DIMENSION, SyntheticEmbedder, disk_mb, server_rss_mb, summary_ms, timed_search

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parent.parent
TENANT_COLLECTION = "BenchKbs"
COLLECTION_PREFIX = "BenchKb"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kbs", type=int, default=1000, help="knowledge bases per layout")
    parser.add_argument("--chunks", type=int, default=1000, help="chunks per knowledge base")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=200, help="objects per batch request")
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--layouts", default="tenants,collections")
    parser.add_argument(
        "--max-active",
        type=int,
        default=0,
        help="tenants: keep at most this many active while loading, deactivating the longest "
        "idle (0: all stay active). Every active shard holds ~26 open files.",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "tenants-latest.md")
    parser.add_argument("--json", type=Path, default=RESULTS / "tenants-latest.json")
    return parser.parse_args(argv)


def text_pool() -> list[Any]:
    """Documents of real text: the licences and the repository's UTF-8 samples."""
    from stitcher.models import Document

    paths = sorted(Path("/usr/share/common-licenses").glob("*"))
    paths += sorted(p for p in (REPO / "samples").glob("*") if p.suffix in (".md", ".txt"))
    docs = []
    for path in paths:
        if not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # the GB 18030 sample
        if text.strip():
            lang = "zh" if sum("\u4e00" <= c <= "\u9fff" for c in text) > len(text) // 10 else "en"
            docs.append(Document(path.name, path.name, text, {"title": path.stem, "lang": lang}))
    return docs


def chunk_pool(docs: list[Any]) -> list[tuple[Any, Any]]:
    """(document, chunks) of every pool document, split as ingest splits them."""
    from stitcher.chunking import split

    return [(doc, split(doc.text)) for doc in docs]


def kb_records(pool: list[tuple[Any, Any]], kb: int, chunks: int, collection: str) -> list[Any]:
    """`chunks` records for knowledge base `kb`: whole documents from a rotated start, the last
    one cut short (its first chunks, as a partly written document would be)."""
    from stitcher.ids import build_records

    records: list[Any] = []
    start = (kb * 7) % len(pool)
    for step in range(len(pool)):
        if len(records) >= chunks:
            break
        doc, doc_chunks = pool[(start + step) % len(pool)]
        wanted = min(len(doc_chunks), chunks - len(records))
        records.extend(build_records(collection, doc, doc_chunks, indices=range(wanted)))
    if len(records) < chunks:
        raise SystemExit(f"the text pool holds only {len(records)} chunks; use --chunks <= that")
    return records


def load_layout(
    layout: str, client: Any, pool: list[tuple[Any, Any]], args: argparse.Namespace
) -> tuple[dict[str, Any], list[Any]]:
    """Create and fill every knowledge base; returns timings and one store per knowledge base."""
    from stitcher.models import CollectionSettings
    from stitcher.store.weaviate import WeaviateStore

    settings = CollectionSettings(
        model="synthetic/random-384", dimension=DIMENSION, chunk_size=250, chunk_overlap=50
    )
    embedder = SyntheticEmbedder()
    stores = []
    create_s = write_s = deactivate_s = 0.0
    failed: dict[str, Any] | None = None
    active: list[str] = []
    started = time.perf_counter()
    t0 = t1 = started
    for kb in range(args.kbs):
        if layout == "tenants":
            name = TENANT_COLLECTION
            store = WeaviateStore(client, name, batch_size=args.batch_size, tenant=f"kb{kb:05d}")
        else:
            name = f"{COLLECTION_PREFIX}{kb:05d}"
            store = WeaviateStore(client, name, batch_size=args.batch_size)
        records = kb_records(pool, kb, args.chunks, name)
        vectors = embedder.embed_documents([r.text for r in records])
        t0 = time.perf_counter()
        try:
            store.create(settings)
            t1 = time.perf_counter()
            failures = store.write(records, vectors)
        except Exception as error:  # the server ran out of something: that is the result
            failures = [error]
        t2 = time.perf_counter()
        if failures:
            failed = {"at_kb": kb, "reason": str(getattr(failures[0], "reason", failures[0]))}
            log(f"  {layout}: knowledge base {kb} failed: {failed['reason'][:300]}")
            break
        create_s += t1 - t0
        write_s += t2 - t1
        stores.append(store)
        if layout == "tenants" and args.max_active:
            active.append(str(store.tenant))
            if len(active) > args.max_active:
                t3 = time.perf_counter()
                idle, active = active[: len(active) // 2], active[len(active) // 2 :]
                _set_inactive(store, idle)
                deactivate_s += time.perf_counter() - t3
        if kb % max(1, args.kbs // 10) == 0 or kb == args.kbs - 1:
            log(
                f"  {layout}: {kb + 1}/{args.kbs} loaded, create {create_s:.1f}s, "
                f"write {write_s:.1f}s, wall {time.perf_counter() - started:.0f}s"
            )
    return {
        "create_s": create_s,
        "write_s": write_s,
        "deactivate_s": deactivate_s,
        "load_s": create_s + write_s + deactivate_s,
        "last_create_ms": (t1 - t0) * 1000,
        "loaded": len(stores),
        "failed": failed,
    }, stores


def _set_inactive(store: Any, names: list[str]) -> None:
    from weaviate.classes.tenants import Tenant, TenantActivityStatus

    for begin in range(0, len(names), 100):
        store._whole.tenants.update(
            [
                Tenant(name=name, activity_status=TenantActivityStatus.INACTIVE)
                for name in names[begin : begin + 100]
            ]
        )


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def make_queries(
    pool: list[tuple[Any, Any]], args: argparse.Namespace, kbs: int
) -> list[tuple[int, str]]:
    """(knowledge base, query) pairs: a fragment of a chunk that knowledge base holds."""
    rng = random.Random(args.seed)
    queries = []
    while len(queries) < args.queries:
        kb = rng.randrange(kbs)
        record = rng.choice(kb_records(pool, kb, args.chunks, TENANT_COLLECTION))
        text = " ".join(record.text.split())
        if sum("\u4e00" <= c <= "\u9fff" for c in text) > 40:
            fragment = text[10:26]
        else:
            fragment = " ".join(text.split(" ")[2:10])
        if len(fragment) >= 12:
            queries.append((kb, fragment))
    return queries


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.setup_environment()
    layouts = [name for name in args.layouts.split(",") if name]
    started = time.perf_counter()
    pool = chunk_pool(text_pool())
    log(f"text pool: {len(pool)} documents, {sum(len(c) for _d, c in pool)} chunks")
    results: dict[str, Any] = {
        "command": "python bench/tenants.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": common.machine_info(),
        "kbs": args.kbs,
        "chunks": args.chunks,
        "layouts": {},
    }
    from contextlib import ExitStack

    with ExitStack() as stack:
        servers: dict[str, Any] = {}
        stores: dict[str, list[Any]] = {}
        for layout in layouts:
            bench = stack.enter_context(common.temp_server())
            client = common.connect(bench)
            stack.callback(client.close)
            servers[layout] = bench
            results["server"] = bench.version
            log(f"{layout}: loading {args.kbs} x {args.chunks} chunks")
            row, stores[layout] = load_layout(layout, client, pool, args)
            row["server_rss_mb"] = server_rss_mb(bench.pid)
            row["open_files"] = open_files(bench.pid)
            row["disk_mb"] = disk_mb(bench.home)
            # Written without a refusal; not counted: a count of every tenant would activate
            # the inactive ones, and more than ~770 active shards exhaust 20,000 open files.
            row["objects"] = len(stores[layout]) * args.chunks
            results["layouts"][layout] = row
            log(f"{layout}: {row}")
            write(args, results, started)

        # Knowledge bases every layout has (one that ran out of files has fewer).
        loaded = min(len(stores[layout]) for layout in layouts)
        results["queried_kbs"] = loaded
        queries = make_queries(pool, args, loaded)
        embedder = SyntheticEmbedder()
        vectors = [embedder.embed_query(q) for _kb, q in queries]
        timings: dict[str, dict[str, list[float]]] = {
            layout: {"raw": [], "stitched": []} for layout in layouts
        }
        # Warm-up: every query once, untimed, so that the timed ones find the tenants they ask
        # active (a first search of an inactive tenant is measured on its own, below).
        for layout in layouts:
            for (kb, query), vector in zip(queries, vectors, strict=True):
                timed_search(stores[layout][kb], query, vector, stitch=False)
        for i, ((kb, query), vector) in enumerate(zip(queries, vectors, strict=True)):
            order = layouts if i % 2 == 0 else list(reversed(layouts))
            for layout in order:
                for stitch in (False, True) if i % 4 < 2 else (True, False):
                    ms, _trips = timed_search(stores[layout][kb], query, vector, stitch=stitch)
                    timings[layout]["stitched" if stitch else "raw"].append(ms)
        for layout in layouts:
            row = results["layouts"][layout]
            row["raw_ms"] = summary_ms(timings[layout]["raw"])
            row["stitched_ms"] = summary_ms(timings[layout]["stitched"])
            row["queries"] = len(queries)
            row["server_rss_after_queries_mb"] = server_rss_mb(servers[layout].pid)

        if "tenants" in layouts:
            deactivate_most(results["layouts"]["tenants"], stores["tenants"], servers["tenants"])
            activation_searches(results["layouts"]["tenants"], stores["tenants"], queries, vectors)
        write(args, results, started)
    print(write(args, results, started))
    return 0


def deactivate_most(row: dict[str, Any], stores: list[Any], bench: Any) -> None:
    """Deactivate all but every tenth tenant, in groups of 100 per request; RSS after."""

    names = [store.tenant for store in stores if int(store.tenant[2:]) % 10 != 0]
    t0 = time.perf_counter()
    _set_inactive(stores[0], names)
    row["deactivated"] = len(names)
    row["deactivate_s"] = time.perf_counter() - t0
    time.sleep(5)  # let the server release what it unloaded
    row["server_rss_mostly_inactive_mb"] = server_rss_mb(bench.pid)
    row["open_files_mostly_inactive"] = open_files(bench.pid)
    log(f"tenants: {len(names)} deactivated, RSS {row['server_rss_mostly_inactive_mb']:.0f} MB")


def activation_searches(
    row: dict[str, Any], stores: list[Any], queries: list[tuple[int, str]], vectors: list[Any]
) -> None:
    """Stitched searches on deactivated tenants (the server activates each on first use),
    then the same search again on the now active tenant."""
    first, again = [], []
    for (kb, query), vector in zip(queries, vectors, strict=True):
        if kb % 10 == 0 or len(first) >= 20 or kb >= len(stores):
            continue
        first.append(timed_search(stores[kb], query, vector)[0])
        again.append(timed_search(stores[kb], query, vector)[0])
    row["first_search_inactive_ms"] = summary_ms(first)
    row["same_search_again_ms"] = summary_ms(again)
    row["activation_samples"] = len(first)


def table(results: dict[str, Any]) -> str:
    def f(value: Any, digits: int = 1) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    lines = [
        "| layout | knowledge bases x chunks | loaded | objects | create s | write s | load s "
        "| server RSS MB | open files | disk MB | raw hybrid p50/p95 ms | stitched p50/p95 ms "
        "| RSS after queries MB | RSS, 90% deactivated MB |",
        "|" + "---|" * 14,
    ]
    for layout, r in results["layouts"].items():
        raw = r.get("raw_ms", {})
        stitched = r.get("stitched_ms", {})
        lines.append(
            f"| {layout} | {results['kbs']} x {results['chunks']} | {r['loaded']} "
            f"| {r['objects']} | {f(r['create_s'])} | {f(r['write_s'])} | {f(r['load_s'])} "
            f"| {f(r['server_rss_mb'], 0)} | {r['open_files']} | {f(r['disk_mb'], 0)} "
            f"| {f(raw.get('p50'))}/{f(raw.get('p95'))} "
            f"| {f(stitched.get('p50'))}/{f(stitched.get('p95'))} "
            f"| {f(r.get('server_rss_after_queries_mb'), 0)} "
            f"| {f(r.get('server_rss_mostly_inactive_mb'), 0)} |"
        )
    for layout, r in results["layouts"].items():
        if r.get("failed"):
            lines.append("")
            lines.append(
                f"{layout}: knowledge base {r['failed']['at_kb']} could not be loaded: "
                f"{r['failed']['reason'][:200]}"
            )
    if "queried_kbs" in results:
        lines.append("")
        lines.append(f"Queries on random knowledge bases among the first {results['queried_kbs']}.")
    tenants = results["layouts"].get("tenants", {})
    if "first_search_inactive_ms" in tenants:
        lines.append("")
        lines.append(
            f"Tenants: first stitched search on a deactivated tenant p50/p95 "
            f"{f(tenants['first_search_inactive_ms']['p50'])}/"
            f"{f(tenants['first_search_inactive_ms']['p95'])} ms, the same search again "
            f"{f(tenants['same_search_again_ms']['p50'])}/"
            f"{f(tenants['same_search_again_ms']['p95'])} ms "
            f"({tenants['activation_samples']} tenants); deactivating "
            f"{tenants['deactivated']} tenants took {f(tenants['deactivate_s'])} s."
        )
    return "\n".join(lines)


def write(args: argparse.Namespace, results: dict[str, Any], started: float) -> str:
    results["seconds"] = time.perf_counter() - started
    text = (
        f"# Tenants: {results['command']}\n\nWeaviate {results.get('server')}, "
        f"{results['seconds']:.0f} s in all.\n\n" + table(results) + "\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    common.write_json(args.json, results)
    return text


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
