"""Issue 11 item 4: does search return whole sentences in every form real text comes in?

    python bench/textforms.py [--budget 120000] [--cases 150] [--forms docbook,man] [--json OUT]

Builds one corpus per text form from Debian packages (bench/textforms_corpus.py: docbook text
manuals, man pages, info manuals, licences, PDF, HTML as the prose control; English and
Chinese), downloading them into the cache when missing. Cases are sentences that the seed's
splitter, RecursiveCharacterTextSplitter(250, 50) on the raw file text, cuts in two; the
sentences are found without stitcher's rules (bench/textforms_cases.py). Each form is ingested
into its own collection with `Stitcher.ingest` on a temporary Weaviate, and every query runs
through `Stitcher.search(query, limit=5)` — so the benchmark measures whatever stitcher is on
the import path.

Per form and language:

- hit@5 forward / backward: a top-5 passage contains the query (comparison key: whitespace
  and hyphens removed). Forward queries are the part of the sentence only the earlier seed
  chunk holds, backward the part only the later one holds.
- whole forward / backward: share of hits whose hit passage contains the whole sentence.
- keyword hit@5: the 2-4 rarest words of the sentence as the query; a hit is a top-5 passage
  holding the first or the second half of the sentence.
- faithful: share of returned passages that are exact slices of the stored document text,
  `load(file).text[start:end] == passage.text`.
- passage p50 / p95: characters of the passages returned for forward and backward queries.
  A second table splits the p95: only the passages holding the query, only the passages made
  of one stitched hit, every hit of a returned passage stitched on its own (before merging),
  and how many passages merge several hits (a merged passage is the union of stitched hits
  that share text, so it can be longer than any of them).
- structure: labelled code/table/synopsis/column lines (sample) still a line of their own in
  the loaded text (target: all).

Targets (issue 11): whole >= 0.99 both ways, faithful 1.000, p95 <= 600, keyword hit@5 >= 0.95.
The Markdown table goes to stdout and to --out (default bench/results/textforms-latest.md),
all numbers, cases and examples to --json (default bench/results/textforms-latest.json).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import textforms_cases as tc
import textforms_corpus as corpus
from common import log, percentile

RESULTS = Path(__file__).resolve().parent / "results"
STRUCTURE_PER_FORM = 25


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=corpus.default_cache())
    parser.add_argument("--budget", type=int, default=120_000, help="characters per form")
    parser.add_argument("--cases", type=int, default=150, help="cases per form and language")
    parser.add_argument("--forms", default="", help="comma-separated forms (default: all)")
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--examples", type=int, default=5, help="examples printed per form")
    parser.add_argument("--out", type=Path, default=RESULTS / "textforms-latest.md")
    parser.add_argument("--json", type=Path, default=RESULTS / "textforms-latest.json")
    return parser.parse_args(argv)


def git_commit() -> str:
    """The commit measured, with "+dirty" when the working tree differs from it."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(common.REPO), *args], capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD") or "unknown"
    return commit + ("+dirty" if git("status", "--porcelain", "--", "stitcher") else "")


# ---------------------------------------------------------------------------------------------
# Preparing a form: files, cases, structure sample
# ---------------------------------------------------------------------------------------------


@dataclass
class PreparedForm:
    built: corpus.BuiltForm
    cases: list[tc.Case]
    all_cut: int
    structure: list[tc.StructureLine]


def prepare(form: str, lang: str, args: argparse.Namespace) -> PreparedForm:
    built = corpus.build_form(form, lang, args.cache, args.budget, args.seed)
    cases: list[tc.Case] = []
    paragraph_words: list[list[str]] = []
    structure: list[tc.StructureLine] = []
    for path in built.files:
        relative = path.relative_to(built.directory).as_posix()
        found, found_words = tc.cut_sentences(path, relative, form, lang)
        cases += found
        paragraph_words += found_words
        structure += tc.structure_lines(path, relative, form)
    cases = tc.drop_ambiguous(
        cases, {path.relative_to(built.directory).as_posix(): path for path in built.files}
    )
    tc.assign_keywords(cases, paragraph_words)
    picked = tc.sample(cases, args.cases, f"{args.seed}/{form}/{lang}")
    labels = tc.sample_structure(structure, STRUCTURE_PER_FORM, f"{args.seed}/{form}/{lang}")
    labels_path = args.cache / "labels" / f"{form}-{lang}.json"
    labels_path.parent.mkdir(parents=True, exist_ok=True)
    labels_path.write_text(
        json.dumps([asdict(s) for s in labels], ensure_ascii=False, indent=1), encoding="utf-8"
    )
    log(
        f"{form}/{lang}: {len(built.files)} files, {sum(p.stat().st_size for p in built.files)} "
        f"bytes, {len(cases)} cut sentences, {len(picked)} cases, {len(labels)} structure lines"
    )
    return PreparedForm(built, picked, len(cases), labels)


# ---------------------------------------------------------------------------------------------
# Running a form
# ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One query's result."""

    kind: str  # forward, backward, keyword
    hit: bool
    whole: bool
    passages: list[dict[str, Any]] = field(default_factory=list)


def run_form(
    form: str,
    prepared: list[PreparedForm],
    bench: common.BenchServer,
    phases: list[common.PhaseStats],
) -> dict[tuple[str, str], dict[str, Any]]:
    """Ingest a form's languages into one collection, run every case, measure."""
    from stitcher import Stitcher
    from stitcher.loaders import discover, load

    directory = prepared[0].built.directory.parent  # CACHE/forms/FORM
    collection = f"Textforms_{form}"
    out: dict[tuple[str, str], dict[str, Any]] = {}
    with Stitcher(bench.url, bench.api_key, collection, grpc_port=bench.grpc_port) as s:
        with common.phase(f"{form}: ingest", bench.pid, phases):
            summary = s.ingest([str(directory)])
        log(f"{form}: {summary.one_line()}")
        texts: dict[str, str] = {}  # doc_id -> stored text
        by_relative: dict[str, str] = {}  # LANG/file -> doc_id
        for src in discover([str(directory)]).files:
            relative = src.path.resolve().relative_to(directory.resolve()).as_posix()
            by_relative[relative] = src.doc_id
            try:
                texts[src.doc_id] = load(src).text
            except Exception as error:  # a file stitcher cannot read is reported, not fatal
                log(f"{form}: {relative}: {error}")
        alone = stitched_alone(s.store, texts)
        for item in prepared:
            lang = item.built.lang
            with common.phase(f"{form}/{lang}: queries", bench.pid, phases):
                outcomes = [run_case(s, case, texts, alone) for case in item.cases]
            structure = structure_check(item, texts, by_relative)
            out[(form, lang)] = summarise(item, outcomes, structure, summary)
    return out


def stitched_alone(store: Any, texts: dict[str, str]) -> dict[tuple[str, int, int], int]:
    """Every stored chunk's length once stitched on its own, by (doc_id, start, end).

    A passage merges the stitched hits that share text, so its length says little about how
    far stitching widened each hit; this is that width, computed by the same `stitch` call
    search makes, with every chunk of the document at hand (search reads the same characters,
    from the stored context or one fetch).
    """
    from stitcher.config import DEFAULT_MAX_EXTEND
    from stitcher.models import SpanRequest
    from stitcher.stitch import stitch

    window = 20_000  # characters per request: far below the store's 10,000-object cap
    lengths: dict[tuple[str, int, int], int] = {}
    for doc_id, stored in store.documents().items():
        size = len(texts.get(doc_id, "")) + 1
        for doc_hash in stored.doc_hashes:
            requests = [
                SpanRequest(doc_id, doc_hash, lo, lo + window) for lo in range(0, size, window)
            ]
            records = sorted(store.fetch_spans(requests), key=lambda r: r.start)
            for r in records:
                span = stitch(r, records, max_extend=DEFAULT_MAX_EXTEND, carry_headings=True)
                lengths[(doc_id, r.start, r.end)] = span.end - span.start
    return lengths


def run_case(
    s: Any, case: tc.Case, texts: dict[str, str], alone: dict[tuple[str, int, int], int]
) -> list[Outcome]:
    sentence_key = tc.key(case.sentence)
    results = []
    queries = [("forward", case.forward), ("backward", case.backward)]
    if case.keywords:
        queries.append(("keyword", " ".join(case.keywords)))
    for kind, query in queries:
        passages = s.search(query, limit=5)
        keys = [tc.key(p.text) for p in passages]
        if kind == "keyword":
            halves = [tc.key(h) for h in case.halves]
            hits = [i for i, k in enumerate(keys) if any(h and h in k for h in halves)]
        else:
            query_key = tc.key(query)
            hits = [i for i, k in enumerate(keys) if query_key in k]
        whole = any(sentence_key in keys[i] for i in hits)
        described = [
            {
                "doc_id": p.doc_id,
                "start": p.start,
                "end": p.end,
                "chars": len(p.text),
                "faithful": texts.get(p.doc_id, "\0")[p.start : p.end] == p.text,
                "hit": i in hits,
                # Hits merged into the passage (stitched hits that overlap or touch become one):
                # tells a long merged passage from one hit stitched long.
                "hits": len(p.hit_ids),
                "hit_spans": [list(span) for span in p.hit_spans],
                "hit_chars": [alone.get((p.doc_id, a, b)) for a, b in p.hit_spans],
                "text": p.text if i in hits else p.text[:120],
            }
            for i, p in enumerate(passages)
        ]
        results.append(Outcome(kind, bool(hits), whole, described))
    return results


def structure_check(
    item: PreparedForm, texts: dict[str, str], by_relative: dict[str, str]
) -> dict[str, Any]:
    lines_of: dict[str, set[str]] = {}
    lost: list[dict[str, Any]] = []
    kept = 0
    for label in item.structure:
        doc_id = by_relative.get(f"{item.built.lang}/{label.file}")
        text = texts.get(doc_id or "")
        if text is None:
            lost.append({**asdict(label), "why": "document not loaded"})
            continue
        if doc_id not in lines_of:
            lines_of[doc_id or ""] = tc.loaded_lines(text)
        if tc.line_kept(label.text, lines_of[doc_id or ""]):
            kept += 1
        else:
            lost.append(asdict(label))
    return {"kept": kept, "total": len(item.structure), "lost": lost}


def summarise(
    item: PreparedForm,
    case_outcomes: list[list[Outcome]],
    structure: dict[str, Any],
    ingest_summary: Any,
) -> dict[str, Any]:
    def of(kind: str) -> list[Outcome]:
        return [o for outcomes in case_outcomes for o in outcomes if o.kind == kind]

    def rate(flags: list[bool]) -> float | None:
        return round(sum(flags) / len(flags), 3) if flags else None

    forward, backward, keyword = of("forward"), of("backward"), of("keyword")
    passages = [p for o in forward + backward + keyword for p in o.passages]
    returned = [p for o in forward + backward for p in o.passages]
    lengths = [p["chars"] for p in returned]
    # The same lengths split the ways the p95 target can be read: only the passage that holds
    # the query (the one answering the case), and only passages of a single stitched hit (the
    # length the stitching bound controls; a merged passage is the union of several, and its
    # hits are left out here, so this is no per-hit figure for regions the query hits densely).
    answering = [p["chars"] for p in returned if p["hit"]]
    one_hit = [p["chars"] for p in returned if p["hits"] == 1]
    # Each hit of a returned passage stitched on its own, before merging.
    per_hit = [n for p in returned for n in p["hit_chars"] if n is not None]
    examples = []
    for case, outcomes in list(zip(item.cases, case_outcomes, strict=True))[:8]:
        examples.append(
            {
                "file": case.file,
                "sentence": case.sentence,
                "queries": [
                    {
                        "kind": o.kind,
                        "query": q,
                        "hit": o.hit,
                        "whole": o.whole,
                        "passage": next((p["text"] for p in o.passages if p["hit"]), None),
                    }
                    for o, q in zip(
                        outcomes,
                        [case.forward, case.backward, " ".join(case.keywords)],
                        strict=False,  # no keyword query when the sentence has < 2 words
                    )
                ],
            }
        )
    return {
        "form": item.built.form,
        "lang": item.built.lang,
        "files": len(item.built.files),
        "sources": list(item.built.sources),
        "note": item.built.note,
        "cut_sentences": item.all_cut,
        "cases": len(item.cases),
        "hit_forward": rate([o.hit for o in forward]),
        "hit_backward": rate([o.hit for o in backward]),
        "whole_forward": rate([o.whole for o in forward if o.hit]),
        "whole_backward": rate([o.whole for o in backward if o.hit]),
        "keyword_cases": len(keyword),
        "keyword_hit": rate([o.hit for o in keyword]),
        "passages": len(passages),
        "faithful": rate([p["faithful"] for p in passages]),
        "passage_p50": percentile(lengths, 50) if lengths else None,
        "passage_p95": percentile(lengths, 95) if lengths else None,
        "passage_p95_answering": percentile(answering, 95) if answering else None,
        "passage_p95_one_hit": percentile(one_hit, 95) if one_hit else None,
        "hit_p95": percentile(per_hit, 95) if per_hit else None,
        "hit_max": max(per_hit) if per_hit else None,
        "hits_unknown": sum(n is None for p in returned for n in p["hit_chars"]),
        "passages_merged": sum(p["hits"] > 1 for p in returned),
        "passages_over_600": sum(p["chars"] > 600 for p in returned),
        "passages_over_600_merged": sum(p["chars"] > 600 and p["hits"] > 1 for p in returned),
        "structure_kept": structure["kept"],
        "structure_total": structure["total"],
        "structure_lost": structure["lost"],
        "ingest_failed": dict(ingest_summary.failed),
        "examples": examples,
        "cases_detail": [asdict(c) for c in item.cases],
        # Per case, its queries' outcomes and passages (hit passages whole), to read failures.
        "outcomes": [[asdict(o) for o in outcomes] for outcomes in case_outcomes],
    }


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

HEADERS = (
    "form",
    "lang",
    "cases",
    "hit@5 fwd",
    "hit@5 bwd",
    "whole fwd",
    "whole bwd",
    "keyword hit@5",
    "faithful",
    "p50",
    "p95",
    "structure kept",
)

LENGTH_HEADERS = (
    "form",
    "lang",
    "p95 all",
    "p95 answering",
    "p95 one hit",
    "p95 / max per hit",
    "merged",
    "> 600",
    "> 600 merged",
)


def report(results: dict[str, Any]) -> str:
    rows = []
    for row in results["rows"]:
        rows.append(
            [
                row["form"],
                row["lang"],
                row["cases"],
                *(
                    common.cell(row[k])
                    for k in (
                        "hit_forward",
                        "hit_backward",
                        "whole_forward",
                        "whole_backward",
                        "keyword_hit",
                        "faithful",
                        "passage_p50",
                        "passage_p95",
                    )
                ),
                f"{row['structure_kept']}/{row['structure_total']}",
            ]
        )
    lines = [
        f"# Text forms: stitcher at {results['commit']}"
        + (" (partial: still running)" if results.get("partial") else ""),
        "",
        f"`{results['command']}` — {results['total_s']} s, Weaviate {results.get('server', '?')},"
        f" budget {results['budget']} characters per form, seed {results['seed']}.",
        "",
        common.markdown_table(HEADERS, rows),
    ]
    lengths = [
        [
            row["form"],
            row["lang"],
            *(
                common.cell(row.get(k))
                for k in (
                    "passage_p95",
                    "passage_p95_answering",
                    "passage_p95_one_hit",
                )
            ),
            f"{common.cell(row.get('hit_p95'))} / {common.cell(row.get('hit_max'))}",
            *(
                common.cell(row.get(k))
                for k in (
                    "passages_merged",
                    "passages_over_600",
                    "passages_over_600_merged",
                )
            ),
        ]
        for row in results["rows"]
    ]
    lines += [
        "",
        "Passage lengths (forward and backward queries): p95 of every returned passage, of the "
        "passages holding the query, of passages made of one stitched hit, and of every hit of "
        "a returned passage stitched on its own (before merging); merged = passages joining "
        "several hits.",
        "",
        common.markdown_table(LENGTH_HEADERS, lengths),
    ]
    if results["failed_forms"]:
        lines += ["", "Forms that could not be built or run:", ""]
        lines += [f"- {name}: {why}" for name, why in results["failed_forms"].items()]
    lines += ["", "## Examples (first cases of each form)", ""]
    for row in results["rows"]:
        for example in row["examples"][:2]:
            lines.append(f"**{row['form']}/{row['lang']}** `{example['file']}`")
            lines.append(f"- sentence: {example['sentence']}")
            for q in example["queries"][:2]:
                passage = (q["passage"] or "(no hit)").replace("\n", "⏎")
                lines.append(
                    f"- {q['kind']} `{q['query']}` hit={q['hit']} whole={q['whole']}: {passage}"
                )
            lines.append("")
    lost = [
        (row["form"], row["lang"], item)
        for row in results["rows"]
        for item in row["structure_lost"]
    ]
    if lost:
        lines += ["## Structure lines no longer on a line of their own", ""]
        lines += [
            f"- {f}/{lang} {i['file']}:{i['line']} ({i['kind']}) `{i['text'].strip()}`"
            for f, lang, i in lost[:40]
        ]
    return "\n".join(lines) + "\n"


def print_examples(row: dict[str, Any], count: int) -> None:
    """Cases to eyeball: query, sentence and the hit passage, on stderr."""
    for example in row["examples"][:count]:
        print(f"--- {row['form']}/{row['lang']} {example['file']}", file=sys.stderr)
        print(f"    sentence: {example['sentence']}", file=sys.stderr)
        for q in example["queries"]:
            passage = (q["passage"] or "(no hit)").replace("\n", "⏎")
            print(
                f"    {q['kind']:8} hit={q['hit']:d} whole={q['whole']:d} query: {q['query']}\n"
                f"             passage: {passage}",
                file=sys.stderr,
            )


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.setup_environment()
    started = time.perf_counter()
    wanted = {f for f in args.forms.split(",") if f}
    forms = [(f, lang) for f, lang in corpus.FORMS if not wanted or f in wanted]
    results: dict[str, Any] = {
        "commit": git_commit(),
        "command": "python bench/textforms.py " + " ".join(argv or sys.argv[1:]),
        "machine": common.machine_info(),
        "budget": args.budget,
        "seed": args.seed,
        "failed_forms": {},
        "rows": [],
    }
    failed: dict[str, str] = results["failed_forms"]
    for package, why in corpus.fetch_packages(args.cache).items():
        log(f"package {package}: {why}")
        results.setdefault("failed_packages", {})[package] = why

    prepared: dict[str, list[PreparedForm]] = {}
    for form, lang in forms:
        try:
            prepared.setdefault(form, []).append(prepare(form, lang, args))
        except Exception as error:  # one form failing must not stop the others
            failed[f"{form}/{lang}"] = f"{type(error).__name__}: {error}"
            log(f"{form}/{lang} skipped: {error}")

    phases: list[common.PhaseStats] = []
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    with common.temp_server() as bench:
        results["server"] = bench.version
        for form, items in prepared.items():
            try:
                rows.update(run_form(form, items, bench, phases))
            except Exception as error:
                for item in items:
                    failed[f"{form}/{item.built.lang}"] = f"{type(error).__name__}: {error}"
                log(f"{form} failed: {type(error).__name__}: {error}")
            # Written after every form, so an interrupted run still leaves what it measured.
            save(args, results, rows, forms, phases, started, final=False)
    text = save(args, results, rows, forms, phases, started, final=True)
    for row in results["rows"]:
        print_examples(row, args.examples)
    print(text)
    return 0


def save(
    args: argparse.Namespace,
    results: dict[str, Any],
    rows: dict[tuple[str, str], dict[str, Any]],
    forms: list[tuple[str, str]],
    phases: list[common.PhaseStats],
    started: float,
    *,
    final: bool,
) -> str:
    """Write the Markdown table and the JSON (marked partial until the last form is done)."""
    results["rows"] = [rows[k] for k in forms if k in rows]
    results["phases"] = [p.to_json() for p in phases]
    results["total_s"] = round(time.perf_counter() - started, 1)
    results["partial"] = not final
    text = report(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str))
    if final:
        log(f"table written to {args.out}, results to {args.json}")
    return text


if __name__ == "__main__":
    sys.exit(main())
