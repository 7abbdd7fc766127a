"""Issue 13 item 7: encode throughput of the real model in one process and in an encode pool.

    nice -n 10 python bench/encode_pool.py [--workers 1,2,3] [--chunks 1024] [--rounds 3]
                                           [--corpus DIR] [--json OUT]

The chunk texts are those `stitcher ingest` stores for the corpus (default samples/: loaded and
split 250/50 as ingest does), repeated to `--chunks`. Every configuration is started once and
warmed (one unmeasured encode of all chunks: torch prepares its kernels per input shape), then
the rounds alternate: each round encodes the same chunks with every configuration, the order
rotated by one each round, so each ratio compares runs seconds apart on this shared machine.

`workers 1` is ingest's in-process embedder (torch's own threads, as today); `workers N` is
stitcher.embed.EncodePool with N processes of max(1, cores // N) torch threads each (N above the
core count shows oversubscription). Pool start-up (spawn, import torch, load the model) is
timed apart and left out of chunks/s: an ingest pays it once per run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from itertools import cycle, islice
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
from common import log

REPO = Path(__file__).resolve().parent.parent


def chunk_texts(corpus: Path, count: int) -> list[str]:
    """The chunk texts ingest would store for `corpus`, cycled to `count`."""
    from stitcher import loaders
    from stitcher.chunking import split_spans
    from stitcher.loaders import discover

    texts = []
    for src in discover([str(corpus)]).files:
        try:
            text = loaders.load(src).text
        except Exception:  # empty or unreadable files hold no chunks
            continue
        texts += [text[start:end] for start, end in split_spans(text, 250, 50)]
    return list(islice(cycle(texts), count))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--chunks", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--corpus", type=Path, default=REPO / "samples")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    common.setup_environment()

    from stitcher.embed import EncodePool, SentenceTransformerEmbedder, resolve_model

    model = resolve_model(None)
    texts = chunk_texts(args.corpus, args.chunks)
    counts = [int(n) for n in args.workers.split(",")]
    log(f"{len(texts)} chunks, {sum(map(len, texts)) / len(texts):.0f} characters on average")
    embedders: dict[int, Any] = {}
    startup: dict[int, float] = {}
    try:
        for n in counts:
            began = time.monotonic()
            if n == 1:
                embedders[n] = SentenceTransformerEmbedder(
                    model, batch_size=args.batch_size, device="cpu"
                )
            else:
                embedders[n] = EncodePool(
                    model, workers=n, batch_size=args.batch_size, device="cpu"
                )
            _ = embedders[n].dimension  # load the model / start the workers
            startup[n] = time.monotonic() - began
            embedders[n].embed_array(texts)  # warm-up, not measured
            log(f"workers {n}: started in {startup[n]:.1f}s, warmed")
        rates: dict[int, list[float]] = {n: [] for n in counts}
        ratios: dict[int, list[float]] = {n: [] for n in counts}
        for round_ in range(args.rounds):
            order = counts[round_ % len(counts) :] + counts[: round_ % len(counts)]
            this_round: dict[int, float] = {}
            for n in order:
                began = time.monotonic()
                embedders[n].embed_array(texts)
                this_round[n] = len(texts) / (time.monotonic() - began)
                rates[n].append(this_round[n])
            for n in counts:
                ratios[n].append(this_round[n] / this_round[counts[0]])
            log(
                f"round {round_ + 1} ({' '.join(map(str, order))}): "
                + ", ".join(f"workers {n} {this_round[n]:.1f}/s" for n in counts)
                + f"; load {os.getloadavg()[0]:.1f}"
            )
    finally:
        for embedder in embedders.values():
            close = getattr(embedder, "close", None)
            if callable(close):
                close()

    rows = [
        [
            n,
            f"{statistics.median(rates[n]):.1f}",
            f"{min(rates[n]):.1f}–{max(rates[n]):.1f}",
            f"{statistics.median(ratios[n]):.2f}",
            f"{min(ratios[n]):.2f}–{max(ratios[n]):.2f}",
            f"{startup[n]:.1f}",
        ]
        for n in counts
    ]
    print(
        common.markdown_table(
            [
                "workers",
                "chunks/s (median)",
                "chunks/s (range)",
                f"× workers {counts[0]} (median of rounds)",
                "× range",
                "start-up s",
            ],
            rows,
        )
    )
    common.write_json(
        args.json,
        {
            "machine": common.machine_info(),
            "chunks": len(texts),
            "rates": rates,
            "ratios": ratios,
            "startup": startup,
            "load_at_end": os.getloadavg(),
        },
    )


if __name__ == "__main__":
    main()
