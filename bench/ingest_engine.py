"""Ingest's two engines side by side: sentence-transformers (torch) and the model's ONNX export.

    python bench/ingest_engine.py [--rounds 3] [--texts 600] [--batch-size 32]

Embeds the same 250-character windows of /usr/share/common-licenses (200 apart, the chunker's
overlap) with both engines, in turn, in this process, and prints each round's rate, the
start-up of each engine (model load; torch's import counted in the first sentence-transformers
round only, as a fresh ingest process pays it) and the largest difference between the vectors.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from stitcher.embed import OnnxEmbedder, export_onnx, onnx_export_dir, resolve_model
from stitcher.embed.st import SentenceTransformerEmbedder

LICENCES = Path("/usr/share/common-licenses")


def windows(limit: int) -> list[str]:
    texts: list[str] = []
    for path in sorted(p for p in LICENCES.iterdir() if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        texts += [text[i : i + 250] for i in range(0, len(text), 200)]
    return texts[:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    model = resolve_model(None)
    export = onnx_export_dir(model) or export_onnx(model)
    texts = windows(args.texts)
    print(f"{len(texts)} texts, batch size {args.batch_size}")

    started = time.perf_counter()
    onnx = OnnxEmbedder(export, args.batch_size)
    print(f"onnx start-up: {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    st = SentenceTransformerEmbedder(model, batch_size=args.batch_size, device="cpu")
    _ = st.dimension  # imports torch and loads the model
    seconds = time.perf_counter() - started
    print(f"sentence-transformers start-up (torch import included): {seconds:.2f} s")

    results: dict[str, np.ndarray] = {}
    for round_ in range(1, args.rounds + 1):
        for name, embedder in (("onnx", onnx), ("sentence-transformers", st)):
            started = time.perf_counter()
            results[name] = np.asarray(embedder.embed_array(texts), dtype=np.float32)
            seconds = time.perf_counter() - started
            print(f"round {round_} {name}: {seconds:.2f} s, {len(texts) / seconds:.1f} texts/s")
    difference = float(np.abs(results["onnx"] - results["sentence-transformers"]).max())
    cosine = float((results["onnx"] * results["sentence-transformers"]).sum(axis=1).min())
    print(f"largest difference of one component: {difference:.2e}; lowest cosine: {cosine:.7f}")


if __name__ == "__main__":
    main()
