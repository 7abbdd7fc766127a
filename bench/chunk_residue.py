"""Issue 32 item 1: chunks without a letter or digit, before and after they join a neighbour.

    python bench/chunk_residue.py [--textforms] [--embed]

For samples/ (and with --textforms, every form of bench/textforms_corpus.py, built into its
cache when missing): loads each file as ingest does, splits it with the splitter's own chunks
("before": `chunking._splitter_spans`) and with `chunking.split_spans` ("after"), and counts the
chunks and those holding no letter or digit. With --embed, embeds each set with the default
model, in one process, batches of 32, and reports the seconds (best of two runs each).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import textforms_corpus as corpus

from stitcher import chunking
from stitcher.loaders import discover, load

REPO = Path(__file__).resolve().parent.parent


def chunk_texts(root: Path) -> tuple[list[str], list[str]]:
    before: list[str] = []
    after: list[str] = []
    for src in discover([str(root)]).files:
        try:
            text = load(src).text
        except Exception:  # an empty or unreadable file is skipped by ingest too
            continue
        before += [text[s:e] for s, e in chunking._splitter_spans(text, 250, 50)]
        after += [text[s:e] for s, e in chunking.split_spans(text, 250, 50)]
    return before, after


def blank(texts: list[str]) -> int:
    return sum(1 for text in texts if not any(ch.isalnum() for ch in text))


def embed_seconds(texts: list[str]) -> float:
    from stitcher.embed import document_embedder
    from stitcher.embed.models import resolve_model

    embedder = document_embedder(resolve_model(None), 32, device="cpu")
    embedder.embed_documents(texts[:32])  # load the model outside the timing
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        embedder.embed_documents(texts)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--textforms", action="store_true")
    parser.add_argument("--embed", action="store_true")
    parser.add_argument("--cache", type=Path, default=corpus.default_cache())
    args = parser.parse_args()
    roots = [("samples", REPO / "samples")]
    if args.textforms:
        for package, why in corpus.fetch_packages(args.cache).items():
            print(f"{package}: {why}", file=sys.stderr)
        for form, lang in corpus.FORMS:
            try:
                built = corpus.build_form(form, lang, args.cache, 120_000, 20261203)
            except corpus.FormError as error:
                print(f"{form}/{lang}: {error}", file=sys.stderr)
                continue
            roots.append((f"textforms {form}/{lang}", built.directory))
    print(
        "| corpus | chunks before | blank before | chunks after | blank after "
        "| embed s before | embed s after |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, root in roots:
        before, after = chunk_texts(root)
        seconds = (
            f"{embed_seconds(before):.1f} | {embed_seconds(after):.1f}" if args.embed else "– | –"
        )
        print(
            f"| {name} | {len(before)} | {blank(before)} | {len(after)} | {blank(after)} "
            f"| {seconds} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
