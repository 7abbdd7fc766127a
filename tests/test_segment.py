from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stitcher.segment import keyword_text, query_keyword_text


def tokens(text: str) -> set[str]:
    return set(keyword_text(text).split(" ")) - {""}


def query_matches(query: str, document: str) -> bool:
    """What BM25 on a whitespace-tokenized property sees: any shared token."""
    return bool(set(query_keyword_text(query).split()) & tokens(document))


@pytest.mark.parametrize(
    ("query", "document"),
    [
        ("内核", "我们需要重新编译内核。"),
        ("编译", "我们需要重新编译内核。"),
        ("北京", "他在北京大学生物学系读书"),
        ("数据", "然后被分别存储在向量数据库中"),
        ("知识", "最近在做基于大模型的知识库应用"),
        ("软件", "软件开发工程师"),
    ],
)
def test_two_character_word_inside_compound_is_found(query: str, document: str) -> None:
    assert query in tokens(document)
    assert query_matches(query, document)


def test_long_query_word_matches_document_with_its_parts() -> None:
    assert query_matches("内核模块", "加载内核的模块")


def test_unrelated_chinese_does_not_match() -> None:
    assert not query_matches("天气", "我们需要重新编译内核。")


def test_english_is_case_insensitive() -> None:
    # (each word, then its English stem where that differs)
    assert keyword_text("Hybrid SEARCH in Weaviate") == "hybrid search in weaviate weaviat"
    assert query_matches("WEAVIATE", "weaviate runs locally")


def test_full_width_letters_and_digits_match_half_width() -> None:
    assert keyword_text("Ｗｅａｖｉａｔｅ　１２３") == "weaviate weaviat 123"
    assert query_matches("weaviate", "ｗｅａｖｉａｔｅ")


@pytest.mark.parametrize(
    "text", ["", "   \n\t", "。，！？……——", "!!! ... ???", "「」『』（）", "___"]
)
def test_punctuation_and_whitespace_only_gives_empty(text: str) -> None:
    assert keyword_text(text) == ""


def test_mixed_chinese_and_latin_are_separated() -> None:
    assert keyword_text("重新编译Linux内核") == "重新 编译 linux 内核"


def test_compound_words_yield_whole_and_parts() -> None:
    result = keyword_text("wi-fi 1.38.11 snake_case")
    assert result.split() == [
        "wi-fi",
        "wi",
        "fi",
        "1.38.11",
        "1",
        "38",
        "11",
        "snake_case",
        "snake",
        "case",
    ]


def test_programming_language_names_survive() -> None:
    assert {"c++", "c#"} <= tokens("I write C++ and C#.")


def test_hangul_and_kana_runs_are_words() -> None:
    assert keyword_text("한국어 텍스트、カタカナ・ひらがな") == "한국어 텍스트 カタカナ ひらがな"


def test_query_uses_same_normalisation_as_documents() -> None:
    text = "Ｃ＋＋ 重新编译内核, wi-fi!"
    assert query_keyword_text(text) == keyword_text(text)


@given(st.text())
def test_output_is_single_space_separated_tokens(text: str) -> None:
    result = keyword_text(text)
    assert result == result.strip()
    assert "  " not in result
    assert not any(ch.isspace() and ch != " " for ch in result)
    assert keyword_text(text) == result  # deterministic


@given(st.text(alphabet="内核编译重新的是我们数据库，。ABCabc 123-.", max_size=60))
def test_tokens_of_a_text_are_tokens_of_its_own_query(text: str) -> None:
    # Any word the index emits must be reproducible from the same text at query time.
    assert set(query_keyword_text(text).split()) == tokens(text)


def test_english_words_also_yield_their_stem() -> None:
    assert tokens("Installing") == {"installing", "instal"}
    assert tokens("installation") == {"installation", "instal"}
    assert "instal" in tokens("after the packages are installed")
    # A question and the passage that answers it meet on the stem, not on the word.
    question = set(query_keyword_text("installing a kernel").split())
    passage = set(keyword_text("The installation of the kernel takes minutes.").split())
    assert {"instal", "kernel"} <= question & passage
    assert "installing" not in passage  # the word itself is not invented, only the stem added


def test_stems_are_for_ascii_words_of_three_letters_or_more() -> None:
    assert tokens("is as was") == {"is", "as", "was"}  # no "i"/"a"; "was" is its own stem
    assert tokens("Übungen über") == {"übungen", "über"}  # not English: left alone
    assert tokens("1.38.11") == {"1.38.11", "1", "38", "11"}
    assert "configur" in tokens("re-configuring")  # parts of a compound are stemmed too


def test_the_keyword_rules_are_part_of_the_text_rules() -> None:
    from stitcher import rules
    from stitcher.segment import KEYWORD_RULES_VERSION

    assert rules.TEXT_RULES_VERSION.endswith(f".keywords{KEYWORD_RULES_VERSION}")
