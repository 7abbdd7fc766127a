"""Issue 5: query cost and sentence completeness of raw hybrid, stitcher and the seed's loop.

    python bench/search_bench.py [--chunks 1200] [--queries 100] [--corpus DIR] [--json OUT]

One server, one index built with `stitcher ingest` from a subset of the Debian corpus. Queries
are halves of sentences that chunking cut in two (no single chunk holds the whole sentence),
Chinese and English separately, first and second halves alternating. For every query, in
rotating order:

- raw hybrid: stitcher's own hybrid query without stitching (`--no-stitch`: one request);
- stitcher: the same query stitched (`stitcher search`);
- the seed's complete_text loop (seed 003) over the raw top hits of the same collection: while
  the text does not end with one of the seed's terminators, fetch the chunk whose parent_id is
  the current id (one filter query per hop, forward only) and append its whole text; at most
  100 hops per hit.

The query vector is computed once per query (ONNX, as `stitcher search` does) and its time is
reported on its own, so the methods differ only in what they ask of Weaviate. Optionally
(default on) the seed's own index is built too (`WeaviateVectorStore.from_documents`, uuid4
ids, parent_id chain) and searched the seed's way. Finally `stitcher search` is timed in fresh
processes.

Targets (issue 5): <= 2 round trips per query; <= 3 s fresh-process search; stitcher <= 1.3x
raw hybrid; the time stitching adds (p50 and p95) >= 5x less than what the seed's loop adds on
Chinese text.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
from common import log, percentile

COLLECTION = "BenchSearch"
SEED_COLLECTION = "BenchSeedSearch"
MAX_HOPS = 100
#: Sentence-final characters for the "ends with a terminator" check (broader than the seed's).
TERMINATORS = "。！？.!?…"
CLOSERS = "”’」』）》〉】〕〗］｝»\"')]}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1200, help="chunks in the index (about)")
    parser.add_argument("--zh-share", type=float, default=0.6, help="share of Chinese chunks")
    parser.add_argument("--queries", type=int, default=100, help="queries per language")
    parser.add_argument("--corpus", type=Path, default=common.DEFAULT_CORPUS)
    parser.add_argument("--json", type=Path, default=None, help="write all results here")
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--no-seed-index", action="store_true", help="skip the seed-built index")
    parser.add_argument("--fresh-runs", type=int, default=5, help="fresh-process searches")
    return parser.parse_args(argv)


# ---------------------------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    lang: str
    text: str
    half: str  # "first" or "second"
    doc_id: str
    start: int  # the whole sentence: doc text [start, end)
    end: int
    sentence: str
    cut: bool  # no single chunk holds the sentence


def han_count(text: str) -> int:
    return sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")


def candidate_sentences(
    doc: common.LoadedDoc,
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(cut, whole): sentences no single chunk contains, and sentences some chunk contains.

    Only one-line sentences of the document's language are used (Chinese: >= 12 Han characters,
    20-600 characters; English: no Han characters, 50-600 characters), as split by
    stitcher.sentences.
    """
    from stitcher.sentences import split_sentences

    cut: list[tuple[int, int]] = []
    whole: list[tuple[int, int]] = []
    for s, e in split_sentences(doc.text):
        sentence = doc.text[s:e]
        if "\n" in sentence:
            continue
        if doc.lang == "zh" and (han_count(sentence) < 12 or not 20 <= len(sentence) <= 600):
            continue
        if doc.lang == "en" and (han_count(sentence) or not 50 <= len(sentence) <= 600):
            continue
        inside = any(c.start <= s and e <= c.end for c in doc.chunks)
        (whole if inside else cut).append((s, e))
    return cut, whole


def select_for_search(
    corpus: Path, budgets: dict[str, int], seed: int, max_doc_chunks: int = 150
) -> list[common.LoadedDoc]:
    """Documents for the index: those holding cut sentences first (stitcher's chunker cuts
    few: it prefers sentence ends), then random others, until each language's chunk budget."""
    rng = random.Random(seed)
    chosen: list[common.LoadedDoc] = []
    for lang, budget in budgets.items():
        groups = common.ZH_GROUPS if lang == "zh" else common.EN_GROUPS
        pool = common.select_documents(
            corpus, {g: 10**9 for g in groups}, seed=seed, max_doc_chunks=max_doc_chunks
        )
        with_cuts = [d for d in pool if candidate_sentences(d)[0]]
        others = [d for d in pool if d not in with_cuts]
        rng.shuffle(with_cuts)
        rng.shuffle(others)
        total = 0
        for doc in with_cuts[:]:
            if total + len(doc.chunks) > budget * 0.85:
                continue
            chosen.append(doc)
            total += len(doc.chunks)
        for doc in others:
            if total >= budget:
                break
            if total + len(doc.chunks) <= budget * 1.05:
                chosen.append(doc)
                total += len(doc.chunks)
    return chosen


def make_queries(
    docs: Sequence[common.LoadedDoc], doc_ids: dict[str, str], per_lang: int, seed: int
) -> list[Query]:
    """Per language: halves of every cut sentence (up to `per_lang`), topped up with halves of
    sentences a chunk holds whole; first and second halves alternate."""
    rng = random.Random(seed)
    queries: list[Query] = []
    for lang in ("zh", "en"):
        cut_pool: list[tuple[common.LoadedDoc, int, int, bool]] = []
        whole_pool: list[tuple[common.LoadedDoc, int, int, bool]] = []
        for doc in docs:
            if doc.lang == lang:
                cut, whole = candidate_sentences(doc)
                cut_pool.extend((doc, s, e, True) for s, e in cut)
                whole_pool.extend((doc, s, e, False) for s, e in whole)
        rng.shuffle(cut_pool)
        rng.shuffle(whole_pool)
        picked = cut_pool[:per_lang]
        picked += whole_pool[: per_lang - len(picked)]
        for i, (doc, s, e, was_cut) in enumerate(picked):
            sentence = doc.text[s:e]
            middle = len(sentence) // 2
            if lang == "en":  # cut between words
                space = sentence.rfind(" ", 0, middle + 1)
                middle = space if space > 0 else middle
            half = "first" if i % 2 == 0 else "second"
            text = (sentence[:middle] if half == "first" else sentence[middle:]).strip()
            queries.append(Query(lang, text, half, doc_ids[doc.relative], s, e, sentence, was_cut))
        log(
            f"{lang}: {len(cut_pool)} cut and {len(whole_pool)} whole sentences in the index; "
            f"queries: {min(per_lang, len(cut_pool))} cut + "
            f"{max(0, per_lang - len(cut_pool))} whole"
        )
    return queries


# ---------------------------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------------------------


class CountingStore:
    """Delegates to a ChunkStore and counts the requests search makes (round trips)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.calls = 0
        self.hybrid_s = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def hybrid(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        t0 = time.perf_counter()
        try:
            return self._store.hybrid(*args, **kwargs)
        finally:
            self.hybrid_s += time.perf_counter() - t0

    def fetch_spans(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self._store.fetch_spans(*args, **kwargs)

    def fetch(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self._store.fetch(*args, **kwargs)


@dataclass
class Result:
    """One method's answer to one query."""

    ms: float
    round_trips: int
    texts: list[str]
    spans: list[tuple[str, int, int] | None]  # (doc_id, start, end) per passage, if known
    hops: list[int] = field(default_factory=list)
    added_ms: float = 0.0
    truncated: int = 0
    paired_added_ms: float = 0.0  # stitcher: its time minus raw hybrid's on the same query


def run_stitcher(
    store: Any, query: str, vector: list[float], limit: int, alpha: float, stitch: bool
) -> tuple[Result, Any]:
    from stitcher.search import SearchOptions, search

    probe = CountingStore(store)
    options = SearchOptions(limit=limit, alpha=alpha, stitch=stitch)
    t0 = time.perf_counter()
    result = search(probe, query, lambda _q: vector, options)
    ms = (time.perf_counter() - t0) * 1000
    passages = result.passages
    out = Result(
        ms=ms,
        round_trips=probe.calls,
        texts=[p.text for p in passages],
        spans=[(p.doc_id, p.start, p.end) for p in passages],
        truncated=sum(p.truncated for p in passages),
    )
    out.added_ms = ms - probe.hybrid_s * 1000  # time outside the hybrid request
    if result.round_trips != probe.calls:
        log(f"WARNING: search reported {result.round_trips} round trips, counted {probe.calls}")
    return out, passages


def seed_loop_on_stitcher_collection(
    collection: Any, raw_passages: Sequence[Any], raw: Result
) -> Result:
    """Seed 003's complete_text for each raw hit, over stitcher's collection.

    Stitcher keeps whitespace at chunk edges while the seed's splitter strips it, so the end
    check looks at the last non-whitespace character (otherwise a chunk ending in a line break
    would never count as finished).
    """
    from weaviate.classes.query import Filter

    texts: list[str] = []
    spans: list[tuple[str, int, int] | None] = []
    hops_per_hit: list[int] = []
    requests = 0
    t0 = time.perf_counter()
    for passage in raw_passages:
        text = passage.text
        current = passage.hit_ids[0]
        end = passage.end
        hops = 0
        end_char = text.rstrip()[-1:]
        while end_char and end_char not in common.SEED_TERMINATORS and hops < MAX_HOPS:
            objects = collection.query.fetch_objects(
                filters=Filter.by_property("parent_id").equal(current)
            ).objects
            requests += 1
            if not objects:
                break
            following = str(objects[0].properties["text"])
            text += following
            end_char = following.rstrip()[-1:]
            current = str(objects[0].uuid)
            end = int(objects[0].properties["end"])
            hops += 1
        texts.append(text)
        spans.append((passage.doc_id, passage.start, end))
        hops_per_hit.append(hops)
    added = (time.perf_counter() - t0) * 1000
    return Result(
        ms=raw.ms + added,
        round_trips=raw.round_trips + requests,
        texts=texts,
        spans=spans,
        hops=hops_per_hit,
        added_ms=added,
    )


def complete_text(client: Any, item: Any, index_name: str) -> int:
    """Seed 003's complete_text, verbatim but for the collection name; returns the hop count
    (capped at MAX_HOPS, which the seed does not have)."""
    punctuation_marks = [".", "?", "!", "。", "?", "！"]
    end_char = item[0].page_content[-1]
    _uuid = item[0].metadata["uuid"]
    from weaviate.classes.query import Filter

    hops = 0
    while end_char and end_char not in punctuation_marks and hops < MAX_HOPS:
        collection = client.collections.get(index_name)
        data_objects = collection.query.fetch_objects(
            filters=Filter.by_property("parent_id").equal(_uuid)
        ).objects
        hops += 1
        if len(data_objects) > 0:
            item[0].page_content += data_objects[0].properties["text"]
            end_char = data_objects[0].properties["text"][-1]
            _uuid = data_objects[0].uuid
        else:
            break
    return hops


def run_seed_index(
    client: Any, store: Any, query: str, vector: list[float], limit: int, alpha: float
) -> Result:
    """The seed's search on its own index: LangChain hybrid (k hits, uuids), then complete_text
    on every hit. One request per hop, counted (an empty answer is a request too)."""
    t0 = time.perf_counter()
    items = store.similarity_search_with_score(
        query, k=limit, alpha=alpha, vector=vector, return_uuids=True
    )
    search_ms = (time.perf_counter() - t0) * 1000
    hops = [complete_text(client, item, SEED_COLLECTION) for item in items]
    ms = (time.perf_counter() - t0) * 1000
    return Result(
        ms=ms,
        round_trips=1 + sum(hops),
        texts=[item[0].page_content for item in items],
        spans=[None] * len(items),
        hops=hops,
        added_ms=ms - search_ms,
    )


# ---------------------------------------------------------------------------------------------
# Measures
# ---------------------------------------------------------------------------------------------


def boundary_stats(result: Result, doc_texts: dict[str, str]) -> tuple[int, int, int, int]:
    """(passages, ending on a sentence end by stitcher's rules at the document offset,
    starting on a sentence start likewise, ending with a terminator character)."""
    from stitcher.sentences import is_sentence_end, is_sentence_start

    n = ends = starts = term = 0
    for text, span in zip(result.texts, result.spans, strict=True):
        n += 1
        stripped = text.rstrip()
        term += stripped.rstrip(CLOSERS)[-1:] in TERMINATORS if stripped else 0
        if span is None:
            continue
        doc_id, start, end = span
        doc = doc_texts[doc_id]
        q = end - (len(text) - len(stripped))
        p = start + (len(text) - len(text.lstrip()))
        ends += is_sentence_end(doc, q, at_doc_start=True, at_doc_end=True)
        starts += is_sentence_start(doc, p, at_doc_start=True, at_doc_end=True)
    return n, ends, starts, term


def sentence_found(result: Result, q: Query) -> tuple[bool, bool, bool]:
    """(verbatim: some passage contains the whole sentence; covered: some passage's document
    span covers it; touched: some passage of the right document overlaps it)."""
    verbatim = any(q.sentence in t for t in result.texts)
    covered = touched = False
    for span in result.spans:
        if span is None or span[0] != q.doc_id:
            continue
        _doc, start, end = span
        covered |= start <= q.start and q.end <= end
        touched |= start < q.end and q.start < end
    return verbatim, covered, touched


def share(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def summarise(
    name: str,
    lang: str,
    results: list[Result],
    queries: list[Query],
    doc_texts: dict[str, str],
    embed_ms: list[float],
) -> dict[str, Any]:
    ms = [r.ms for r in results]
    added = [r.added_ms for r in results]
    trips = [r.round_trips for r in results]
    hops = [h for r in results for h in r.hops]
    totals = [boundary_stats(r, doc_texts) for r in results]
    passages = sum(t[0] for t in totals)
    found = [sentence_found(r, q) for r, q in zip(results, queries, strict=True)]
    with_spans = any(r.spans and r.spans[0] is not None for r in results)
    row: dict[str, Any] = {
        "method": name,
        "lang": lang,
        "queries": len(results),
        "ms_p50": round(percentile(ms, 50), 2),
        "ms_p95": round(percentile(ms, 95), 2),
        "ms_mean": round(statistics.mean(ms), 2),
        "ms_with_embedding_p50": round(
            percentile([a + b for a, b in zip(ms, embed_ms, strict=True)], 50), 2
        ),
        "added_ms_p50": round(percentile(added, 50), 2),
        "added_ms_p95": round(percentile(added, 95), 2),
        "round_trips_mean": round(statistics.mean(trips), 2),
        "round_trips_p95": percentile(trips, 95),
        "round_trips_max": max(trips),
        "passages": passages,
        "ends_with_terminator": round(sum(t[3] for t in totals) / max(passages, 1), 3),
        "cut_queries": sum(q.cut for q in queries),
        "whole_sentence_verbatim": round(sum(f[0] for f in found) / len(found), 3),
        "whole_cut_sentence_verbatim": share(
            [f[0] for f, q in zip(found, queries, strict=True) if q.cut]
        ),
        "mean_passage_chars": round(
            statistics.mean(len(t) for r in results for t in r.texts) if passages else 0, 1
        ),
    }
    if with_spans:
        row["ends_on_sentence_end"] = round(sum(t[1] for t in totals) / max(passages, 1), 3)
        row["starts_on_sentence_start"] = round(sum(t[2] for t in totals) / max(passages, 1), 3)
        row["whole_sentence_covered"] = round(sum(f[1] for f in found) / len(found), 3)
        row["whole_cut_sentence_covered"] = share(
            [f[1] for f, q in zip(found, queries, strict=True) if q.cut]
        )
        row["sentence_touched"] = round(sum(f[2] for f in found) / len(found), 3)
    if hops:
        row["hops_per_hit_p50"] = percentile(hops, 50)
        row["hops_per_hit_p95"] = percentile(hops, 95)
        row["hops_per_hit_max"] = max(hops)
        row["hits_at_hop_cap"] = sum(h >= MAX_HOPS for h in hops)
    truncated = sum(r.truncated for r in results)
    if name == "stitcher":
        row["truncated_passages"] = truncated
    return row


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.setup_environment()
    started = time.perf_counter()
    info = common.machine_info()
    log(f"machine: {info['cpus']} cores, load {info['load_at_start']}")
    common.ensure_corpus(args.corpus)
    zh_budget = round(args.chunks * args.zh_share)
    docs = select_for_search(
        args.corpus, {"zh": zh_budget, "en": args.chunks - zh_budget}, args.seed
    )
    results: dict[str, Any] = {
        "machine": info,
        "corpus": {
            "path": str(args.corpus),
            "selection": common.corpus_description(docs),
            "seed": args.seed,
        },
        "limit": args.limit,
        "alpha": args.alpha,
    }
    phases: list[common.PhaseStats] = []
    with tempfile.TemporaryDirectory(prefix="stitcher-bench-subset-") as tmp:
        subset = common.materialise(docs, Path(tmp) / "corpus")
        with common.temp_server() as bench:
            results["server"] = {"version": bench.version}
            run_all(args, bench, subset, docs, phases, results)
    results["phases"] = [p.to_json() for p in phases]
    results["total_s"] = round(time.perf_counter() - started, 1)
    print_report(results)
    common.write_json(args.json, results)
    return 0


def run_all(
    args: argparse.Namespace,
    bench: common.BenchServer,
    subset: Path,
    docs: list[common.LoadedDoc],
    phases: list[common.PhaseStats],
    results: dict[str, Any],
) -> None:
    from stitcher import Stitcher
    from stitcher.loaders import discover

    pid = bench.pid
    with Stitcher(bench.url, bench.api_key, COLLECTION, grpc_port=bench.grpc_port) as s:
        with common.phase("stitcher ingest (index)", pid, phases):
            summary = s.ingest([str(subset)])
        log(summary.one_line())
        results["index"] = summary.to_json() | {"documents": None}

        # Stored doc ids are relative to the directory given to ingest ("corpus/zh/...").
        doc_ids = {
            src.path.resolve().relative_to(subset.resolve()).as_posix(): src.doc_id
            for src in discover([str(subset)]).files
        }
        doc_texts = {doc_ids[d.relative]: d.text for d in docs}
        queries = make_queries(docs, doc_ids, args.queries, args.seed)
        results["queries"] = [q.__dict__ for q in queries]

        embedder = s.query_embedder()
        results["query_embedder"] = type(embedder).__name__
        embedder.embed_query("warm-up 预热")
        vectors, embed_ms = [], []
        for q in queries:
            t0 = time.perf_counter()
            vectors.append(embedder.embed_query(q.text))
            embed_ms.append((time.perf_counter() - t0) * 1000)

        store = s.store
        collection = s.client.collections.use(s.collection)

        def raw(i: int) -> tuple[Result, Any]:
            return run_stitcher(store, queries[i].text, vectors[i], args.limit, args.alpha, False)

        def stitched(i: int) -> tuple[Result, Any]:
            return run_stitcher(store, queries[i].text, vectors[i], args.limit, args.alpha, True)

        for i in range(min(10, len(queries))):  # warm-up: connections, caches
            r, passages = raw(i)
            stitched(i)
            seed_loop_on_stitcher_collection(collection, passages, r)

        per_method: dict[str, list[Result]] = {"raw hybrid": [], "stitcher": [], "seed loop": []}
        with common.phase("queries on stitcher's index", pid, phases):
            for i in range(len(queries)):
                # Rotate the order so no method always runs first (warmest or coldest).
                order = ["raw", "stitcher"][:: 1 if i % 2 == 0 else -1]
                done: dict[str, tuple[Result, Any]] = {}
                for name in order:
                    done[name] = raw(i) if name == "raw" else stitched(i)
                raw_result, raw_passages = done["raw"]
                per_method["raw hybrid"].append(raw_result)
                per_method["stitcher"].append(done["stitcher"][0])
                per_method["seed loop"].append(
                    seed_loop_on_stitcher_collection(collection, raw_passages, raw_result)
                )
        # Paired: what stitching adds to the same query over raw hybrid.
        for method in ("stitcher",):
            for r, base in zip(per_method[method], per_method["raw hybrid"], strict=True):
                r.paired_added_ms = r.ms - base.ms

        rows = []
        for lang in ("zh", "en"):
            idx = [i for i, q in enumerate(queries) if q.lang == lang]
            if not idx:
                continue
            lang_queries = [queries[i] for i in idx]
            lang_embed = [embed_ms[i] for i in idx]
            for name, method_results in per_method.items():
                chosen = [method_results[i] for i in idx]
                row = summarise(name, lang, chosen, lang_queries, doc_texts, lang_embed)
                if name == "stitcher":
                    paired = [r.paired_added_ms for r in chosen]
                    row["stitch_part_ms_p50"] = row.pop("added_ms_p50")
                    row["stitch_part_ms_p95"] = row.pop("added_ms_p95")
                    row["added_ms_p50"] = round(percentile(paired, 50), 2)
                    row["added_ms_p95"] = round(percentile(paired, 95), 2)
                if name == "raw hybrid":
                    row["added_ms_p50"] = row["added_ms_p95"] = 0.0
                rows.append(row)
            rows.append(
                {
                    "method": "query embedding (ONNX)",
                    "lang": lang,
                    "ms_p50": round(percentile(lang_embed, 50), 2),
                    "ms_p95": round(percentile(lang_embed, 95), 2),
                }
            )
        results["rows"] = rows

        if not args.no_seed_index:
            results["seed_index"] = seed_index(args, bench, subset, queries, vectors, phases)

        results["fresh_process"] = fresh_searches(args, bench, queries)


def seed_index(
    args: argparse.Namespace,
    bench: common.BenchServer,
    subset: Path,
    queries: list[Query],
    vectors: list[list[float]],
    phases: list[common.PhaseStats],
) -> dict[str, Any]:
    """Build the seed's own index of the same files and search it the seed's way."""
    from langchain_weaviate import WeaviateVectorStore

    from stitcher.embed import SentenceTransformerEmbedder, resolve_model

    embeddings = common.langchain_embeddings(SentenceTransformerEmbedder(resolve_model(None)))
    client = common.connect(bench)
    try:
        paths = sorted(subset.rglob("*.txt"))
        with common.phase("seed from_documents (index)", bench.pid, phases):
            chunks = common.seed_split(paths, subset)
            kwargs = common.build_document_hierarchy(chunks)
            WeaviateVectorStore.from_documents(
                chunks, embeddings, client=client, index_name=SEED_COLLECTION, **kwargs
            )
        stored = common.count_objects(client, SEED_COLLECTION)
        store = WeaviateVectorStore(client, SEED_COLLECTION, "text", embedding=embeddings)
        for i in range(min(10, len(queries))):
            run_seed_index(client, store, queries[i].text, vectors[i], args.limit, args.alpha)
        found: list[Result] = []
        with common.phase("queries on the seed's index", bench.pid, phases):
            for i, q in enumerate(queries):
                found.append(
                    run_seed_index(client, store, q.text, vectors[i], args.limit, args.alpha)
                )
        rows = []
        for lang in ("zh", "en"):
            idx = [i for i, q in enumerate(queries) if q.lang == lang]
            if idx:
                rows.append(
                    summarise(
                        "seed index + complete_text",
                        lang,
                        [found[i] for i in idx],
                        [queries[i] for i in idx],
                        {},
                        [0.0] * len(idx),
                    )
                )
        return {"chunks": len(chunks), "stored": stored, "rows": rows}
    finally:
        client.close()


def fresh_searches(
    args: argparse.Namespace, bench: common.BenchServer, queries: list[Query]
) -> dict[str, Any]:
    """Wall time of one `stitcher search` in a new process (median), with and without .pyc."""
    exe = common.stitcher_exe()
    if not exe.exists():
        log(f"no {exe}: skipping fresh-process searches")
        return {}
    picks = [q for q in queries if q.lang == "zh"][:3] + [q for q in queries if q.lang == "en"][:2]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="stitcher-bench-pycache-") as pycache:
        for mode, prefix in (("no_pyc", None), ("pyc_cache", Path(pycache))):
            env = common.cli_environment(bench, prefix)
            times, took = [], []
            for i in range(args.fresh_runs + (1 if prefix else 0)):
                q = picks[i % len(picks)]
                command = [
                    str(exe),
                    "search",
                    q.text,
                    "--collection",
                    COLLECTION,
                    "--url",
                    bench.url,
                    "--grpc-port",
                    str(bench.grpc_port),
                    "--json",
                ]
                t0 = time.perf_counter()
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
                wall = time.perf_counter() - t0
                if done.returncode != 0:
                    log(f"WARNING: stitcher search exit {done.returncode}: {done.stderr[-300:]}")
                    continue
                if prefix is not None and i == 0:
                    continue  # fills the bytecode cache
                times.append(round(wall, 3))
                took.append(json.loads(done.stdout)["took_ms"])
            out[mode] = {
                "wall_s": times,
                "median_s": statistics.median(times) if times else None,
                "took_ms_median": statistics.median(took) if took else None,
            }
            log(f"fresh `stitcher search` ({mode}): {times}")
    return out


def print_report(results: dict[str, Any]) -> None:
    def pct(v: Any) -> str:
        return f"{100 * v:.0f}%" if isinstance(v, float) else "–"

    headers = [
        "method",
        "lang",
        "ms p50",
        "ms p95",
        "added ms p50",
        "added ms p95",
        "round trips mean / max",
        "hops/hit p50 / p95 / max",
        "whole sentence (verbatim)",
        "whole sentence (span covered)",
        "cut sentences: whole (verbatim / covered)",
        "ends on sentence end",
        "starts on sentence start",
        "ends with terminator char",
        "mean chars",
    ]
    table = []
    rows = list(results["rows"]) + list((results.get("seed_index") or {}).get("rows", []))
    for r in rows:
        if "queries" not in r:
            table.append([r["method"], r["lang"], r["ms_p50"], r["ms_p95"]] + ["–"] * 11)
            continue
        hops = (
            f"{r['hops_per_hit_p50']} / {r['hops_per_hit_p95']} / {r['hops_per_hit_max']}"
            if "hops_per_hit_p50" in r
            else "–"
        )
        table.append(
            [
                r["method"],
                f"{r['lang']} ({r['queries']})",
                r["ms_p50"],
                r["ms_p95"],
                r["added_ms_p50"],
                r["added_ms_p95"],
                f"{r['round_trips_mean']} / {r['round_trips_max']}",
                hops,
                pct(r["whole_sentence_verbatim"]),
                pct(r.get("whole_sentence_covered")),
                f"{pct(r.get('whole_cut_sentence_verbatim'))} / "
                f"{pct(r.get('whole_cut_sentence_covered'))} of {r['cut_queries']}",
                pct(r.get("ends_on_sentence_end")),
                pct(r.get("starts_on_sentence_start")),
                pct(r["ends_with_terminator"]),
                r["mean_passage_chars"],
            ]
        )
    print(common.markdown_table(headers, table))
    print()
    by = {(r["method"], r["lang"]): r for r in results["rows"]}
    for lang in ("zh", "en"):
        raw, st, seed = (by.get((m, lang)) for m in ("raw hybrid", "stitcher", "seed loop"))
        if not (raw and st and seed):
            continue
        print(
            f"{lang}: stitcher / raw hybrid time p50 {st['ms_p50'] / raw['ms_p50']:.2f}x, "
            f"p95 {st['ms_p95'] / raw['ms_p95']:.2f}x; seed-loop added / stitching added "
            f"p50 {seed['added_ms_p50'] / max(st['added_ms_p50'], 1e-9):.1f}x, "
            f"p95 {seed['added_ms_p95'] / max(st['added_ms_p95'], 1e-9):.1f}x; "
            f"stitch part (outside the hybrid request) p50 {st['stitch_part_ms_p50']} ms, "
            f"p95 {st['stitch_part_ms_p95']} ms; truncated passages {st['truncated_passages']}"
        )
    for mode, f in (results.get("fresh_process") or {}).items():
        print(
            f"fresh-process `stitcher search` ({mode}): median {f['median_s']} s {f['wall_s']}, "
            f"reported took_ms median {f['took_ms_median']}"
        )
    print(f"total {results['total_s']} s")


if __name__ == "__main__":
    sys.exit(main())
