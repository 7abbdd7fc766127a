"""Issue 15: does Weaviate's HNSW index return the nearest chunks the model's vectors point at?

    python bench/vector_recall.py --model multilingual-e5-small [--builds 1] [--efs -1,256,1024]
                                  [--ef-construction N --max-connections N] [--json OUT]

For each build: a fresh server, the question benchmark's corpus (bench/questions.py) ingested
with the model, every chunk's stored vector read back; then for every English and Chinese
question, the 15 chunks nearest its query vector by exact cosine (numpy over all chunks) against
the 15 that `near_vector` returns (what the hybrid's vector side asks for), at each query-time
`ef` (the collection's setting, changed between passes; -1 is Weaviate's dynamic default).
recall@15 = the share of the exact 15 that came back. `--ef-construction` / `--max-connections`
build the index with other settings than stitcher's (Weaviate's defaults) to see whether the graph
itself is the cause.

Found with this (BENCHMARKS.md, issue 15 fifth round): with multilingual-e5-small the English
questions' recall is poor, which explains why its exact-cosine ranking beat its hybrid.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import questions as qb
from common import log
from textforms_corpus import default_cache

TOP = 15


def index_settings(ef_construction: int | None, max_connections: int | None) -> None:
    """Make stitcher create its collection with these HNSW build settings (bench only)."""
    if ef_construction is None and max_connections is None:
        return
    from weaviate.classes.config import Configure

    original = Configure.Vectors.self_provided

    def self_provided(**kwargs: Any) -> Any:
        kwargs.setdefault(
            "vector_index_config",
            Configure.VectorIndex.hnsw(
                ef_construction=ef_construction, max_connections=max_connections
            ),
        )
        return original(**kwargs)

    Configure.Vectors.self_provided = staticmethod(self_provided)  # type: ignore[method-assign]


def one_build(model: str, efs: list[int], corpus: Path, questions: list[Any]) -> list[dict]:
    import numpy as np
    from weaviate.classes.config import Reconfigure

    from stitcher import Stitcher

    rows = []
    with (
        common.temp_server() as bench,
        Stitcher(bench.url, bench.api_key, "Recall", grpc_port=bench.grpc_port) as s,
    ):
        s.ingest([str(corpus)], model=model)
        collection = s.client.collections.get(s.collection)
        ids, vectors = [], []
        for obj in collection.iterator(include_vector=True):
            vector = obj.vector.get("default") if isinstance(obj.vector, dict) else obj.vector
            ids.append(str(obj.uuid))
            vectors.append(vector)
        id_array = np.asarray(ids)
        matrix = np.asarray(vectors, dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        embedder = s.query_embedder()
        query_vectors = {
            q.id: np.asarray(embedder.embed_query(q.question), dtype=np.float32) for q in questions
        }
        for ef in efs:
            collection.config.update(
                vector_config=Reconfigure.Vectors.update(
                    name="default", vector_index_config=Reconfigure.VectorIndex.hnsw(ef=ef)
                )
            )
            for lang in ("en", "zh"):
                recalls = []
                for q in (q for q in questions if q.lang == lang):
                    v = query_vectors[q.id]
                    exact = set(id_array[np.argsort(-(matrix @ (v / np.linalg.norm(v))))[:TOP]])
                    got = collection.query.near_vector(near_vector=v.tolist(), limit=TOP)
                    recalls.append(len(exact & {str(o.uuid) for o in got.objects}) / TOP)
                row = {
                    "ef": ef,
                    "lang": lang,
                    "n": len(recalls),
                    **common.recall_summary(recalls),
                }
                log(f"{model} ef {ef} {lang}: {row}")
                rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--builds", type=int, default=1)
    parser.add_argument("--efs", default="-1,256,1024", help="query-time ef values, comma list")
    parser.add_argument("--ef-construction", type=int)
    parser.add_argument("--max-connections", type=int)
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    efs = [int(x) for x in args.efs.split(",")]
    index_settings(args.ef_construction, args.max_connections)
    corpus = qb.build_corpus(args.cache)
    questions = qb.load_questions(qb.QUESTIONS, ["en", "zh"])
    builds = [one_build(args.model, efs, corpus, questions) for _ in range(args.builds)]
    if args.json:
        report = {
            "command": " ".join(["python", "bench/vector_recall.py", *sys.argv[1:]]),
            "model": args.model,
            "ef_construction": args.ef_construction,
            "max_connections": args.max_connections,
            "builds": builds,
        }
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
