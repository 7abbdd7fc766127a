"""Keyword text for BM25: Chinese split into words, everything normalised the same way.

Weaviate's default `word` tokenizer keeps a run of Han characters as one token, so a two-character
query such as 内核 never matches 重新编译内核. Instead of depending on a server-side Chinese
tokenizer, documents and queries are segmented here into a space-separated string that is stored
in a property with `whitespace` tokenization. Index and query must go through the same function,
otherwise their tokens drift apart.

Han runs use rjieba's search mode: besides the best segmentation it emits the shorter dictionary
words inside long ones (北京大学 -> 北京 大学 北京大学), which is what makes a short query word
match a compound. On the project's Chinese sample texts it found 99.4% of the two-character
dictionary words occurring in the text, against 86% for the precise mode.

Latin-script words are handled the same way: a compound joined by "-", "." or "_" (wi-fi, 1.38.11,
snake_case) yields the whole compound and its parts, so both `1.38.11` and `38` match.

English words also yield their Snowball stem when it differs (installing -> instal, beside
installing itself), the lexical analysis English otherwise lacked: `installing`, `installed` and
`installation` were three unrelated terms to BM25. Like the Chinese sub-words, the stem is an
extra token next to the word, so an exact word still outranks a mere stem match (it matches
both). Stems are made for words of ASCII letters only: Snowball's English rules make nonsense of
other languages' words, and keeping the word itself means nothing is lost where a stem is wrong.
The stemmer is PyStemmer (libstemmer's C implementation: ~1 µs a word).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

import Stemmer  # PyStemmer: a small C extension, ~1 ms to import

_HAN = (
    "\u3005\u3007"  # 々 (repetition mark) and 〇 (ideographic zero) behave like Han characters
    "\u3400-\u4dbf"  # extension A
    "\u4e00-\u9fff"  # unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\U00020000-\U0003134f"  # extensions B-G
)

# One match per token candidate: a Han run (handed to rjieba), or a compound word of other letters
# and digits (Latin, Cyrillic, Greek, Hangul, Kana, ...). `[^\W...]` means "a word character
# that is not Han". A trailing "++" or "#" is kept for names like c++ and c#.
_WORD = rf"[^\W{_HAN}]+"
_TOKEN_RE = re.compile(
    rf"(?P<han>[{_HAN}]+)"
    rf"|(?P<word>{_WORD}(?:[-.]{_WORD})*(?:\+\+|#)?(?![^\W{_HAN}]))"
)
# Parts of a compound word: underscore is a word character for `\w`, so split on it explicitly.
_PART_RE = re.compile(r"[^\W_]+")

# Words the English stemmer is asked about: ASCII letters only, at least three of them (shorter
# words are their own stems, and "is"/"as" must not meet "i"/"a").
_STEMMABLE_RE = re.compile(r"[a-z]{3,}")

#: Version of these keyword rules; part of stitcher.rules.TEXT_RULES_VERSION, because the stored
#: `text_seg` of every chunk is made by them and a query must be analysed the same way.
#: 2: English words also yield their Snowball stem.
KEYWORD_RULES_VERSION = 2

#: Whether English stems are added (only bench/questions.py turns this off, to measure them).
stem_english = True


@functools.lru_cache(maxsize=1)
def _english_stemmer() -> Any:
    return Stemmer.Stemmer("english")


def _han_tokens(run: str) -> list[str]:
    import rjieba  # loads its dictionary on import (0.15-0.2 s here): only for Chinese text

    return rjieba.cut_for_search(run)


def _word_tokens(word: str) -> Iterator[str]:
    parts = _PART_RE.findall(word)
    if not parts:  # only underscores: punctuation in practice
        return
    yield word
    if len(parts) > 1 or parts[0] != word:
        yield from parts
    if stem_english:
        for part in parts:
            if _STEMMABLE_RE.fullmatch(part):
                stem = _english_stemmer().stemWord(part)
                if stem != part:
                    yield stem


def _tokens(text: str) -> Iterator[str]:
    normalised = unicodedata.normalize("NFKC", text).casefold()
    for match in _TOKEN_RE.finditer(normalised):
        han = match.group("han")
        if han is not None:
            yield from _han_tokens(han)
        else:
            yield from _word_tokens(match.group("word"))


def keyword_text(text: str) -> str:
    """Turn document text into space-separated keyword tokens for a `whitespace`-tokenized property.

    The text is NFKC-normalised (full-width letters and digits become ASCII) and case-folded;
    Chinese is segmented with rjieba in search mode; other words are kept whole, plus their parts
    when joined by "-", "." or "_", plus the English stem of each part of ASCII letters when it
    differs; punctuation and whitespace are dropped.

    Args:
        text: Any text, e.g. one chunk.

    Returns:
        Tokens joined by single spaces; "" when the text has no letters or digits.
    """
    return " ".join(_tokens(text))


def query_keyword_text(query: str) -> str:
    """Segment a search query exactly like `keyword_text` segments documents.

    The query also uses search mode: a long query word (内核模块) then matches documents that
    contain only its parts (内核, 模块), while documents containing the whole word still rank
    higher because they match every token.

    Args:
        query: The user's query.

    Returns:
        Tokens joined by single spaces; "" when the query has no letters or digits.
    """
    return keyword_text(query)
