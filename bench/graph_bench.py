"""What filtering along references costs, per hop, at 100k chunks (seed 000's graph filters).

Builds a synthetic graph in a Weaviate of its own (bench/common.temp_server):

- organizations in COUNTRIES countries (one of them "Bigland" with ~30% of all companies,
  "France" with ~5%), suppliers of 50 large customers, investment funds; people on 2 boards each;
- documents of CHUNKS_PER_DOC chunks, each mentioning 1-3 organizations (skewed towards a few
  popular ones), random sentiment and date, random words as text, random unit vectors.

Two layouts hold the same chunks:

  chunk-refs  stitcher's layout: every chunk holds `mentions_ref` → organization (written by
              WeaviateStore.write, resolved by stitcher.graph like a real ingest)
  doc-object  every chunk holds `doc` → a document object, which holds `mentions` → organization
              (one hop more on every path, far fewer references stored)

and times hybrid queries (alpha 0.5, limit 15) and "latest" listings (fetch sorted by date, the
no-topic branch) under each filter, median and p90 of REPEAT runs after one warm-up.

    python bench/graph_bench.py --chunks 100000 --json /tmp/graph-bench.json
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    connect,
    log,
    machine_info,
    markdown_table,
    percentile,
    setup_environment,
    temp_server,
    write_json,
)

CHUNKS_PER_DOC = 10
BIG_CUSTOMERS = 50
FUNDS = 100
VOCABULARY = 5000


def build_entities(rng: random.Random, orgs: int, people: int, countries: int) -> list[Any]:
    from stitcher.graph.model import Entity

    names = [f"country{i}" for i in range(countries - 2)]
    entities = []
    for i in range(orgs):
        draw = rng.random()
        country = "Bigland" if draw < 0.3 else "France" if draw < 0.35 else rng.choice(names)
        links: dict[str, tuple[str, ...]] = {}
        if i >= BIG_CUSTOMERS and rng.random() < 0.6:
            customers = rng.sample(range(BIG_CUSTOMERS), rng.randint(1, 3))
            links["supplier_of"] = tuple(f"org{c}" for c in customers)
        if BIG_CUSTOMERS <= i < BIG_CUSTOMERS + FUNDS:
            links["invested_in"] = tuple(f"org{rng.randrange(orgs)}" for _ in range(5))
        entities.append(
            Entity(
                "organization",
                f"org{i}",
                f"Company {i}",
                (f"Co{i}", f"公司{i}"),
                {"city": f"city{i % 500}", "country": country, "industry": f"ind{i % 40}"},
                links,
            )
        )
    for p in range(people):
        boards = tuple(f"org{rng.randrange(orgs)}" for _ in range(2))
        entities.append(
            Entity("person", f"p{p}", f"Person {p}", (), {}, {"board_member_of": boards})
        )
    return entities


def popular_org(rng: random.Random, orgs: int) -> int:
    """Skewed choice: a few companies are in the news a lot (Zipf-like)."""
    return min(orgs - 1, int(orgs ** rng.random()) - 1)


def unit_vector(rng: random.Random, dim: int) -> list[float]:
    values = [rng.gauss(0, 1) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def build(client: Any, args: argparse.Namespace) -> dict[str, Any]:
    from weaviate.classes.config import (
        Configure,
        DataType,
        Property,
        ReferenceProperty,
        Tokenization,
    )
    from weaviate.classes.data import DataObject

    from stitcher.graph.model import entity_uuid
    from stitcher.ids import chunk_uuid
    from stitcher.models import ChunkRecord, CollectionSettings
    from stitcher.store.weaviate import WeaviateStore
    from stitcher.store.weaviate.entities import EntityStore

    rng = random.Random(args.seed)
    chunk_coll, doc_chunks, doc_coll = "GraphBench", "GraphBenchByDoc", "GraphBenchDocument"
    started = time.perf_counter()
    entities = build_entities(rng, args.orgs, args.people, args.countries)
    EntityStore(client, chunk_coll).load(entities, relink=False)
    log(f"{len(entities)} entities loaded in {time.perf_counter() - started:.1f}s")

    store = WeaviateStore(client, chunk_coll, batch_size=500)
    store.create(CollectionSettings("bench-random", args.dim, 250, 50))
    client.collections.create(
        doc_coll,
        properties=[
            Property(name="doc_id", data_type=DataType.TEXT, tokenization=Tokenization.FIELD)
        ],
        references=[
            ReferenceProperty(name="mentions", target_collection=f"{chunk_coll}_Organization")
        ],
        vector_config=Configure.Vectors.self_provided(),
    )
    client.collections.create(
        doc_chunks,
        properties=[
            Property(
                name="text_seg", data_type=DataType.TEXT, tokenization=Tokenization.WHITESPACE
            ),
            Property(name="sentiment", data_type=DataType.NUMBER, index_range_filters=True),
            Property(name="chunk_index", data_type=DataType.INT),
            Property(name="date", data_type=DataType.DATE),
        ],
        references=[ReferenceProperty(name="doc", target_collection=doc_coll)],
        vector_config=Configure.Vectors.self_provided(),
    )
    documents = client.collections.use(doc_coll)
    by_doc = client.collections.use(doc_chunks)
    words = [f"w{i}" for i in range(VOCABULARY)]
    base = datetime(2019, 1, 1, tzinfo=timezone.utc)
    docs = args.chunks // CHUNKS_PER_DOC
    write_s = {"chunk-refs": 0.0, "doc-object": 0.0}
    for first in range(0, docs, 100):
        records, vectors, doc_objects, chunk_objects = [], [], [], []
        for d in range(first, min(docs, first + 100)):
            mentioned = sorted({popular_org(rng, args.orgs) for _ in range(rng.randint(1, 3))})
            names = [f"Company {m}" for m in mentioned]
            meta = {
                "mentions": names,
                "sentiment": round(rng.uniform(-1, 1), 2),
                "date": base + timedelta(hours=rng.randrange(5 * 365 * 24)),
            }
            doc_id = f"doc{d}"
            doc_uuid = chunk_uuid(doc_coll, doc_id, "v1", 0)
            doc_objects.append(
                DataObject(
                    properties={"doc_id": doc_id},
                    uuid=doc_uuid,
                    references={
                        "mentions": [
                            entity_uuid(chunk_coll, "organization", f"org{m}") for m in mentioned
                        ]
                    },
                )
            )
            for c in range(CHUNKS_PER_DOC):
                text = " ".join(rng.choices(words, k=40))
                vector = unit_vector(rng, args.dim)
                records.append(
                    ChunkRecord(
                        chunk_uuid(chunk_coll, doc_id, "v1", c), doc_id, "v1", c, c * 200,
                        c * 200 + 250, text, doc_id, str(c), CHUNKS_PER_DOC * 200, None, meta,
                    )
                )  # fmt: skip
                vectors.append(vector)
                chunk_objects.append(
                    DataObject(
                        properties={
                            "text_seg": text,
                            "sentiment": meta["sentiment"],
                            "chunk_index": c,
                            "date": meta["date"],
                        },
                        uuid=chunk_uuid(doc_chunks, doc_id, "v1", c),
                        vector=vector,
                        references={"doc": [doc_uuid]},
                    )
                )
        t0 = time.perf_counter()
        failures = store.write(records, vectors)
        write_s["chunk-refs"] += time.perf_counter() - t0
        assert not failures, failures[:3]
        t0 = time.perf_counter()
        for collection, objects in ((documents, doc_objects), (by_doc, chunk_objects)):
            result = collection.data.insert_many(objects)
            assert not result.errors, list(result.errors.values())[:3]
        write_s["doc-object"] += time.perf_counter() - t0
        if first % 2000 == 0:
            log(f"{first * CHUNKS_PER_DOC} chunks written")
    log(f"built in {time.perf_counter() - started:.0f}s; write seconds {write_s}")
    return {"write_seconds": {k: round(v, 1) for k, v in write_s.items()}}


def cases(rng: random.Random, client: Any, args: argparse.Namespace) -> list[tuple[str, str, Any]]:
    """(label, hops, stitcher Where) for each measured filter."""
    from stitcher.filters import Condition, Where

    # A person on the board of a fund (for the 3-hop path investor → board_member).
    fund_board = next(
        p
        for p in range(args.people)
        if any(BIG_CUSTOMERS <= int(o[3:]) < BIG_CUSTOMERS + FUNDS for o in _boards_of(client, p))
    )
    person = rng.randrange(args.people)
    w = lambda *c: Where(tuple(c))  # noqa: E731
    return [
        ("no filter", "0", None),
        ("sentiment<-0.5", "0", w(Condition("sentiment", "lt", "-0.5"))),
        ("mentions.id=org3 (popular)", "1", w(Condition("mentions.id", "eq", "org3"))),
        (
            f"mentions.id=org{args.orgs // 2}",
            "1",
            w(Condition("mentions.id", "eq", f"org{args.orgs // 2}")),
        ),
        ("mentions.country=France (~5%)", "1", w(Condition("mentions.country", "eq", "France"))),
        ("mentions.country=Bigland (~30%)", "1", w(Condition("mentions.country", "eq", "Bigland"))),
        (
            "France and sentiment<-0.5",
            "1",
            w(Condition("mentions.country", "eq", "France"), Condition("sentiment", "lt", "-0.5")),
        ),
        (
            f"mentions.board_member.name=Person {person}",
            "2",
            w(Condition("mentions.board_member.name", "eq", f"Person {person}")),
        ),
        (
            "mentions.supplier_of.name=Company 0",
            "2",
            w(Condition("mentions.supplier_of.name", "eq", "Company 0")),
        ),
        (
            f"mentions.investor.board_member.name=Person {fund_board}",
            "3",
            w(Condition("mentions.investor.board_member.name", "eq", f"Person {fund_board}")),
        ),
    ]


def _boards_of(client: Any, person: int) -> list[str]:
    from weaviate.classes.query import Filter

    people = client.collections.use("GraphBench_Person")
    found = people.query.fetch_objects(
        filters=Filter.by_property("entity_id").equal(f"p{person}"), limit=1
    )
    return list(found.objects[0].properties.get("board_member_of_ids") or [])


def doc_object_filter(where: Any, extras: Any) -> Any:
    """The same Where on the doc-object layout: chunk → `doc` → `mentions` → organization."""
    from weaviate.classes.query import Filter

    from stitcher.store.weaviate.filters import path_filter, translate

    if where is None:
        return None
    parts = [
        path_filter(c, start=("doc", "mentions"))
        if "." in c.field
        else translate(type(where)((c,)), extras, (), "")
        for c in where.all_of
    ]
    return parts[0] if len(parts) == 1 else Filter.all_of(parts)


def time_it(run: Callable[[], Any], repeat: int) -> dict[str, float]:
    run()  # warm-up (caches, first-touch of the inverted index)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1000)
    return {"median_ms": round(percentile(times, 50), 1), "p90_ms": round(percentile(times, 90), 1)}


def measure(client: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    from stitcher.store.weaviate import WeaviateStore

    rng = random.Random(args.seed + 1)
    store = WeaviateStore(client, "GraphBench")
    rows = []
    for label, hops, where in cases(rng, client, args):
        query_words = " ".join(f"w{rng.randrange(VOCABULARY)}" for _ in range(3))
        row = measure_case(client, store, where, query_words, unit_vector(rng, args.dim), args)
        row = {"filter": label, "hops": hops, **row}
        log(f"{label}: {row}")
        rows.append(row)
    return rows


def measure_case(
    client: Any, store: Any, where: Any, words: str, vector: list[float], args: argparse.Namespace
) -> dict[str, Any]:
    """Matching chunks and timings of one filter on both layouts."""
    from weaviate.classes.query import Filter, HybridFusion, Sort

    from stitcher.store.weaviate.filters import translate

    by_doc = client.collections.use("GraphBenchByDoc")
    chunks = client.collections.use("GraphBench")
    chunk_filter = translate(where, store._load_extras(), store._references, "GraphBench")
    doc_filter = doc_object_filter(where, store._load_extras())
    matched = chunks.aggregate.over_all(filters=chunk_filter, total_count=True).total_count
    matched_doc = by_doc.aggregate.over_all(filters=doc_filter, total_count=True).total_count
    row: dict[str, Any] = {"chunks": matched}
    if matched_doc != matched:
        row["doc_object_mismatch"] = matched_doc

    def hybrid(collection: Any, filters: Any) -> Any:
        return collection.query.hybrid(
            query=words,
            vector=vector,
            alpha=0.5,
            fusion_type=HybridFusion.RELATIVE_SCORE,
            query_properties=["text_seg"],
            limit=15,
            filters=filters,
            return_properties=["chunk_index"],
        )

    def latest(collection: Any, filters: Any) -> Any:
        first = Filter.by_property("chunk_index").equal(0)
        return collection.query.fetch_objects(
            filters=first if filters is None else first & filters,
            sort=Sort.by_property("date", ascending=False),
            limit=15,
            return_properties=["chunk_index"],
        )

    row["chunk-refs hybrid"] = time_it(lambda: hybrid(chunks, chunk_filter), args.repeat)
    row["doc-object hybrid"] = time_it(lambda: hybrid(by_doc, doc_filter), args.repeat)
    row["chunk-refs latest"] = time_it(lambda: latest(chunks, chunk_filter), args.repeat)
    row["doc-object latest"] = time_it(lambda: latest(by_doc, doc_filter), args.repeat)
    # The product path: WeaviateStore.hybrid (reads all properties, parses explain_score).
    row["stitcher hybrid"] = time_it(
        lambda: store.hybrid(words, words, vector, limit=15, alpha=0.5, where=where), args.repeat
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--orgs", type=int, default=2_000)
    parser.add_argument("--people", type=int, default=1_000)
    parser.add_argument("--countries", type=int, default=40)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    setup_environment()
    with temp_server() as bench:
        client = connect(bench)
        try:
            built = build(client, args)
            rows = measure(client, args)
        finally:
            client.close()
    headers = ["filter", "hops", "chunks", "chunk-refs hybrid", "doc-object hybrid",
               "chunk-refs latest", "doc-object latest", "stitcher hybrid"]  # fmt: skip
    table = [
        [r["filter"], r["hops"], r["chunks"]]
        + [f"{r[h]['median_ms']} / {r[h]['p90_ms']}" for h in headers[3:]]
        for r in rows
    ]
    print(markdown_table(headers, table))
    write_json(
        args.json,
        {"args": vars(args) | {"json": str(args.json)}, "machine": machine_info(), **built,
         "rows": rows},
    )  # fmt: skip


if __name__ == "__main__":
    main()
