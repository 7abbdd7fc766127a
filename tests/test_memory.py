"""Ingest's memory stays bounded: peak RSS grows with a document by a small multiple of its
size, not with its chunk count times the vector size.

Each measurement runs in a fresh subprocess (`python -m tests.test_memory FILE`) that ingests
one file with a fake float32 embedder into a store that keeps nothing, so what is measured is
the pipeline itself (loading, splitting, records, vectors), and prints its peak RSS. The same
command measured the 200 MB figure in the README (with --load-model, which also loads the real
model so that its memory is counted).
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stitcher.models import (
    ChunkRecord,
    CollectionSettings,
    PendingDocument,
    StoredDocument,
    WriteFailure,
)

WORKTREE = Path(__file__).resolve().parent.parent
DIMENSION = 384  # all-MiniLM-L6-v2

pytestmark = pytest.mark.slow


class NullStore:
    """A ChunkStore that accepts every write and keeps nothing (counts what it got)."""

    name = "Memory"
    tenant = None

    def __init__(self) -> None:
        self.settings_: CollectionSettings | None = None
        self.written = 0

    def exists(self) -> bool:
        return self.settings_ is not None

    def create(self, settings: CollectionSettings) -> None:
        self.settings_ = settings

    def settings(self) -> CollectionSettings | None:
        return self.settings_

    def documents(self) -> dict[str, StoredDocument]:
        return {}

    def vectors_by_chunk_hash(self, doc_id: str, hashes: Iterable[str]) -> dict[str, list[float]]:
        return {}

    def take_unresolved_mentions(self) -> dict[str, list[str]]:
        return {}

    def write(
        self, records: Sequence[ChunkRecord], vectors: Sequence[Sequence[float]]
    ) -> list[WriteFailure]:
        assert len(records) == len(vectors)
        assert all(len(v) == DIMENSION for v in vectors)
        self.written += len(records)
        return []

    def delete_document(self, doc_id: str, keep_doc_hash: str | None = None) -> int:
        return 0

    def begin_documents(self, documents: Sequence[PendingDocument]) -> None:
        pass

    def finish_documents(self, doc_ids: Sequence[str]) -> None:
        pass


class FastEmbedder:
    """float32 vectors from a text's hash: the model's shape without the model's time."""

    name = "fake/float32"
    dimension = DIMENSION

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        seeds = [hash(text) & 0xFFFFFFFF for text in texts]
        return np.stack(
            [np.random.default_rng(seed).random(DIMENSION, dtype=np.float32) for seed in seeds]
        )


def real_ish_text(megabytes: float, seed: int = 5) -> str:
    """Paragraphs of English and Chinese sentences, with numbers so that chunks differ."""
    from tests.test_ingest import EN, ZH

    rng = random.Random(seed)
    sentences = [s.strip() + "." for s in EN.split(".") if s.strip()]
    sentences += [s + "。" for s in ZH.split("。") if s]
    parts: list[str] = []
    size = 0
    target = int(megabytes * 1_000_000)
    paragraph = 0
    while size < target:
        paragraph += 1
        body = " ".join(rng.choice(sentences) for _ in range(rng.randint(2, 8)))
        text = f"{paragraph}. {body}\n\n"
        parts.append(text)
        size += len(text.encode("utf-8"))
    return "".join(parts)


def measure(path: Path, load_model: str = "no") -> dict[str, Any]:
    """Ingest `path` in this process and report peak RSS (MB) and what was written.

    `load_model`: "no"; "first" (the real model is loaded before the document, as when an
    earlier document needed it: the worst case); "lazily" (when ingest asks for the embedder,
    as `stitcher ingest` does).
    """
    from stitcher.embed import load_sentence_transformer, resolve_model
    from stitcher.ingest import IngestOptions, ingest

    if load_model == "first":
        load_sentence_transformer(resolve_model(None))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    store = NullStore()
    embedder = FastEmbedder()

    def make_embedder() -> FastEmbedder:
        if load_model == "lazily":
            load_sentence_transformer(resolve_model(None))
        return embedder

    summary = ingest(
        store,  # type: ignore[arg-type]
        [str(path)],
        model_name=embedder.name,
        embedder=make_embedder,
        options=IngestOptions(),
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "file_mb": path.stat().st_size / 1e6,
        "baseline_mb": round(before),
        "peak_mb": round(peak),
        "chunks": store.written,
        "exit_code": summary.exit_status,
    }


def _measure_in_subprocess(path: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    out = subprocess.run(
        [sys.executable, "-m", "tests.test_memory", str(path)],
        cwd=WORKTREE,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_peak_memory_grows_with_the_text_not_with_chunks_times_vectors(tmp_path: Path) -> None:
    small = tmp_path / "small.txt"
    small.write_text(real_ish_text(0.2), encoding="utf-8")
    large = tmp_path / "large.txt"
    large.write_text(real_ish_text(20), encoding="utf-8")
    base = _measure_in_subprocess(small)
    big = _measure_in_subprocess(large)
    assert base["exit_code"] == big["exit_code"] == 0
    assert big["chunks"] > 60_000  # really ~75k chunks went through the pipeline
    growth = big["peak_mb"] - base["peak_mb"]
    # Python float lists for every vector would be ~1.2 GB here; a ChunkRecord (with its
    # context) per chunk ~200 MB. Text, its bytes and decoding copies: a few times 20 MB.
    assert growth <= 8 * big["file_mb"], (base, big)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="peak RSS of ingesting one file")
    parser.add_argument("file", type=Path)
    parser.add_argument(
        "--load-model", choices=["no", "first", "lazily"], default="no", help="see measure()"
    )
    parser.add_argument("--generate", type=float, help="first write this many MB of text")
    args = parser.parse_args()
    if args.generate:
        args.file.write_text(real_ish_text(args.generate), encoding="utf-8")
    print(json.dumps(measure(args.file, load_model=args.load_model)))
