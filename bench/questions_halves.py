"""Issue 35 item 6: the question benchmark in two halves, one to choose on and one held out.

    python bench/questions_halves.py RESULT.json [RESULT.json ...]

Each question goes to a half by its id alone (the first hex digit of sha1(id) even: `tune`,
odd: `held-out`), so the split is fixed, needs no file of its own, and a question added later
lands in a half without moving the others. A decision (a rule, a default, a weight) is made on
the `tune` half; the `held-out` half is reported next to it and says whether the decision
carried over to questions it was not fitted to. Several result files (from bench/questions.py
--json) are printed side by side, one row each, in the order given.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

HALVES = ("tune", "held-out")


def half_of(question_id: str) -> str:
    digit = int(hashlib.sha1(question_id.encode("utf-8")).hexdigest()[0], 16)
    return HALVES[digit % 2]


def rows_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (set, half, alpha): n, hit@5, MRR@5 from the per-question details."""
    sets = {q["id"]: q["set"] for q in result["questions"]}
    tallies: dict[tuple[str, str, str], list[int | None]] = {}
    for question_id, by_alpha in result["details"].items():
        for alpha, detail in by_alpha.items():
            key = (sets[question_id], half_of(question_id), alpha)
            tallies.setdefault(key, []).append(detail.get("rank"))
    rows = []
    for (name, half, alpha), ranks in sorted(tallies.items()):
        rows.append(
            {
                "set": name,
                "half": half,
                "alpha": alpha,
                "n": len(ranks),
                "hit5": round(sum(r is not None for r in ranks) / len(ranks), 3),
                "mrr5": round(sum(1 / r for r in ranks if r) / len(ranks), 3),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, nargs="+")
    args = parser.parse_args(argv)
    print("| result | set | half | alpha | n | hit@5 | MRR@5 |")
    print("|---|---|---|---|---|---|---|")
    for path in args.results:
        result = json.loads(path.read_text(encoding="utf-8"))
        for row in rows_of(result):
            print(
                f"| {path.stem} | {row['set']} | {row['half']} | {row['alpha']} | {row['n']} "
                f"| {row['hit5']:.3f} | {row['mrr5']:.3f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
