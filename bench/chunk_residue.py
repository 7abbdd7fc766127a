"""Issue 32 item 1: chunks without a letter or digit, before and after they join a neighbour.

    python bench/chunk_residue.py [--textforms [--forms man/en,...]] [--embed]
        [--before-rev 619bbac] [--no-samples]

For samples/ (and with --textforms, every form of bench/textforms_corpus.py, built into its
cache when missing): loads each file as ingest does, splits it with the splitter's own chunks
("before": `chunking._splitter_spans`) and with `chunking.split_spans` ("after"), and counts the
chunks and those holding no letter or digit. With --before-rev, "before" is instead the
`stitcher/chunking.py` of that git revision (e.g. 619bbac, before residue absorption), imported
under another name; the text is loaded by today's readers for both. With --embed, embeds each
set with the default model, in one process, batches of 32, and reports the seconds (best of
two runs each).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import textforms_corpus as corpus

from stitcher import chunking
from stitcher.loaders import discover, load

REPO = Path(__file__).resolve().parent.parent


Spans = Callable[[str, int, int], Iterable[tuple[int, int]]]


def chunking_at(revision: str) -> Spans:
    """`split_spans` of stitcher/chunking.py as it was at `revision`."""
    source = subprocess.run(
        ["git", "show", f"{revision}:stitcher/chunking.py"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / f"chunking_{revision}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"chunking_{revision}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    split_spans: Spans = module.split_spans
    return split_spans


def chunk_texts(root: Path, before_spans: Spans) -> tuple[list[str], list[str]]:
    before: list[str] = []
    after: list[str] = []
    for src in discover([str(root)]).files:
        try:
            text = load(src).text
        except Exception:  # an empty or unreadable file is skipped by ingest too
            continue
        before += [text[s:e] for s, e in before_spans(text, 250, 50)]
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
    parser.add_argument("--before-rev", help="git revision whose chunking is 'before'")
    parser.add_argument("--forms", help="only these text forms, e.g. man/en,html/en")
    parser.add_argument("--no-samples", action="store_true", help="leave samples/ out")
    parser.add_argument(
        "--no-fetch", action="store_true", help="use the packages already in the cache"
    )
    args = parser.parse_args()
    before_spans = chunking_at(args.before_rev) if args.before_rev else chunking._splitter_spans
    roots = [] if args.no_samples else [("samples", REPO / "samples")]
    wanted = set(args.forms.split(",")) if args.forms else None
    if args.textforms:
        fetched = {} if args.no_fetch else corpus.fetch_packages(args.cache)
        for package, why in fetched.items():
            print(f"{package}: {why}", file=sys.stderr)
        for form, lang in corpus.FORMS:
            if wanted is not None and f"{form}/{lang}" not in wanted:
                continue
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
        before, after = chunk_texts(root, before_spans)
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
