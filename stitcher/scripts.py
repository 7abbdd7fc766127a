"""Which script a text is written in, and which part of a by-script model embeds it.

Pure functions, no imports beyond the standard library. The fusion rules (stitcher.fusion) ask
what a model can read; the by-script embedder (stitcher.embed.routed) picks the model part for a
text; the stores (stitcher.store.vectors) pick the named vector that part's vectors live in. All
three must agree on every text, so the rule is here, below all of them.
"""

from __future__ import annotations

_SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "latin"),
    (0x0370, 0x03FF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x06FF, "arabic"),
    (0x0E00, 0x0E7F, "thai"),
    (0x1100, 0x11FF, "hangul"),
    (0x1E00, 0x1EFF, "latin"),
    (0x3040, 0x30FF, "kana"),
    (0x3400, 0x4DBF, "han"),
    (0x4E00, 0x9FFF, "han"),
    (0xAC00, 0xD7AF, "hangul"),
    (0xF900, 0xFAFF, "han"),
    (0x20000, 0x323AF, "han"),
)


def script_of(char: str) -> str | None:
    """The script of one letter ("latin", "han", ...), "other", or None for a non-letter."""
    if not char.isalpha():
        return None
    code = ord(char)
    for lo, hi, script in _SCRIPT_RANGES:
        if lo <= code <= hi:
            return script
    return "other"


def script_shares(text: str) -> dict[str, float]:
    """Share of the letters of `text` in each script (digits, spaces, punctuation ignored)."""
    counts: dict[str, int] = {}
    for char in text:
        script = script_of(char)
        if script is not None:
            counts[script] = counts.get(script, 0) + 1
    total = sum(counts.values())
    return {script: n / total for script, n in counts.items()} if total else {}


#: Scripts written without spaces between words, which the Chinese-reading side of stitcher
#: treats as one: Chinese characters and kana (Japanese writes with both). Used by
#: stitcher.fusion.keyword_list and by `route_of` to pick the model that reads them.
UNSPACED_SCRIPTS = frozenset({"han", "kana"})

#: The scripts a by-script model names a model for, in the order its stored name lists them.
#: "han" takes the texts with a real share of Chinese characters (and kana; the rule is
#: `route_of`), "latin" all the others. Both must be given: every text needs a model.
ROUTE_SCRIPTS = ("latin", "han")

#: The share of a text's letters in UNSPACED_SCRIPTS (Chinese characters, kana) from which
#: the "han" part embeds it. Not a majority: the Chinese manuals' chunks are full of commands,
#: file names and English terms ("用 dpkg-reconfigure 重新配置软件包"), and a Chinese
#: question about them must meet them in the space of the model that reads Chinese (which
#: reads the Latin words too); MiniLM reads no Chinese at all. An English text with a stray
#: Chinese word stays far below it. Question benchmark, `--model bilingual`: Chinese questions
#: hit@5 0.644 with a majority rule (0.5), 0.712 at 0.3, 0.705 at 0.1 (one question apart);
#: Chinese quoted fragments 0.977, 0.985, 0.992 — so 0.1; English the same at all three.
HAN_ROUTE_SHARE = 0.1


def route_of(text: str) -> str:
    """ "han" when at least HAN_ROUTE_SHARE of the letters of `text` are Chinese characters (or
    kana), else "latin". Digits, spaces and punctuation do not count.
    """
    shares = script_shares(text)
    han = sum(share for script, share in shares.items() if script in UNSPACED_SCRIPTS)
    return "han" if han and han >= HAN_ROUTE_SHARE else "latin"
