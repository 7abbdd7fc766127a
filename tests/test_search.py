"""Search: sentences cut by chunking come back whole, in one store call (two at most), on both
stores."""

from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import UsageError, worded
from stitcher.ingest import IngestOptions, ingest
from stitcher.search import SearchOptions, search
from tests.fakes import CountingStore, FakeEmbedder
from tests.stores import both_stores

LONG_ZH = (
    "在山区修建铁路的那些年里，工程师们不得不一边勘测一边修改图纸，因为每一场暴雨都可能冲毁刚刚"
    "平整好的路基，而运送钢轨的骡队往往要在泥泞的山道上走上整整一个星期，才能把材料送到工地，"
    "所以当地人至今还流传着“一根枕木一担米”的说法，用来形容当时修路的艰难与昂贵，"
    "后来，随着隧道技术的进步和炸药的普及，施工的速度明显加快了，原本需要绕行三十多公里的线路被"
    "一条笔直的长隧道取代，旅客从山脚到山顶的时间也从大半天缩短到不足一个小时，沿线的小镇因此"
    "迎来了第一批外地游客，茶叶、竹器和山货也第一次被大量运往省城的市场！\n\n"
    "然而，铁路带来的并不只有繁荣，有些依靠挑夫和马帮为生的村子渐渐冷清下来，年轻人纷纷离开家乡，"
    "去城里的工厂寻找新的出路，老人们则守着空荡荡的驿站，讲述那些关于马铃声和篝火的往事，"
    "他们说起当年的商队如何在风雪里翻过垭口，如何在半山腰的客栈里用一壶热茶换来一夜的安稳，"
    "又如何在第一列火车鸣笛进站的那天早上，站在月台边上久久不愿离开，"
    "直到今天，人们在讨论这条铁路的历史时，仍然会同时提到它带来的机会和它改变的生活方式。"
)
SENTENCE = re.compile(r"[^。！？.!?\n]+(?:[。！？][”」』）]*|[.!?]['\")]*(?=\s|$))")


SAMPLES = Path(__file__).resolve().parent.parent / "samples"

store = both_stores("S")


@pytest.fixture
def loaded(store: Any, tmp_path: Path) -> tuple[Any, FakeEmbedder, Path]:
    """The store (both kinds) with real paragraphs ingested."""
    root = tmp_path / "docs"
    root.mkdir()
    # Real paragraphs (written for the project) whose long sentences the chunker must cut.
    shutil.copy(SAMPLES / "zh_tea_cultivation.txt", root / "tea.txt")
    shutil.copy(SAMPLES / "en_bird_migration.txt", root / "birds.txt")
    # Sentences longer than a chunk (clauses joined by ，) are what a sentence-aware chunker cuts.
    (root / "long_zh.txt").write_text(LONG_ZH, encoding="utf-8")
    embedder = FakeEmbedder()
    ingest(
        store,
        [str(root)],
        model_name=embedder.name,
        embedder=lambda: embedder,
        options=IngestOptions(),
    )
    return store, embedder, root


def sample_records(name: str, chunk_size: int = 250, overlap: int = 50) -> tuple[Any, list[Any]]:
    """A sample file as ingest loads it, and its chunk records (collection "T")."""
    from stitcher.chunking import split
    from stitcher.ids import build_records
    from stitcher.loaders import discover, load

    doc = load(discover([str(SAMPLES / name)]).files[0])
    return doc, build_records("T", doc, split(doc.text, chunk_size, overlap))


def loaded_text(path: Path) -> str:
    """The document text as ingest saw it (hard-wrapped lines joined): offsets refer to it."""
    from stitcher.loaders import discover, load

    return load(discover([str(path)]).files[0]).text


def cut_sentences(store: Any, text: str, doc_id: str) -> list[str]:
    """Sentences of `text` that no single stored chunk contains."""
    from stitcher.models import SpanRequest

    docs = store.documents()
    (doc_hash,) = docs[doc_id].doc_hashes
    chunks = store.fetch_spans([SpanRequest(doc_id, doc_hash, 0, 10**9)])
    out = []
    for match in SENTENCE.finditer(text):
        s, e = match.start(), match.end()
        if not any(c.start <= s and e <= c.end for c in chunks):
            out.append(match.group().strip())
    return out


@pytest.mark.parametrize("half", ["first", "second"])
def test_a_sentence_cut_in_two_comes_back_whole(loaded: Any, half: str) -> None:
    store, embedder, root = loaded
    checked = 0
    languages = set()
    for name in ("tea.txt", "birds.txt", "long_zh.txt"):
        doc_id, text = f"docs/{name}", loaded_text(root / name)
        for sentence in cut_sentences(store, text, doc_id):
            middle = len(sentence) // 2
            query = sentence[:middle] if half == "first" else sentence[middle:]
            counting = CountingStore(store)
            result = search(
                counting, query, embedder.embed_query, SearchOptions(limit=5, alpha=0.0)
            )
            assert len(counting.calls) <= 2
            assert any(sentence in p.text for p in result.passages), (query, result.passages)
            for p in result.passages:
                if p.doc_id == doc_id:
                    assert text[p.start : p.end] == p.text
            checked += 1
            languages.add("zh" if "zh" in name or "tea" in name else "en")
    assert checked >= 4 and len(languages) == 2  # sentences really are cut, in both languages


def test_no_stitch_returns_the_raw_chunks(loaded: Any) -> None:
    store, embedder, _ = loaded
    result = search(
        store,
        "migration route",
        embedder.embed_query,
        SearchOptions(limit=3, stitch=False, alpha=0.0),
    )
    assert result.round_trips == 1 and result.passages
    stored = {r.id: r for r in store.fetch([p.hit_ids[0] for p in result.passages])}
    for p in result.passages:
        assert p.text == stored[p.hit_ids[0]].text and p.chunk_ids == p.hit_ids


def test_results_never_exceed_limit_and_stay_in_score_order(loaded: Any) -> None:
    store, embedder, _ = loaded
    for limit in (1, 2, 5):
        result = search(store, "茶叶 birds", embedder.embed_query, SearchOptions(limit=limit))
        assert 0 < len(result.passages) <= limit
        scores = [p.score for p in result.passages]
        assert scores == sorted(scores, reverse=True)


def test_merged_passages_do_not_overlap(loaded: Any) -> None:
    store, embedder, _ = loaded
    result = search(
        store, "采摘 修剪 茶叶", embedder.embed_query, SearchOptions(limit=5, alpha=0.0)
    )
    spans = sorted((p.doc_id, p.start, p.end) for p in result.passages)
    for (d1, _, e1), (d2, s2, _) in itertools.pairwise(spans):
        assert d1 != d2 or e1 < s2
    all_hits = [h for p in result.passages for h in p.hit_ids]
    assert len(all_hits) == len(set(all_hits))


def test_empty_query_is_a_usage_error(loaded: Any) -> None:
    store, embedder, _ = loaded
    with pytest.raises(UsageError):
        search(store, "   ", embedder.embed_query)


def test_two_character_chinese_word_is_found(loaded: Any) -> None:
    store, embedder, _ = loaded
    result = search(store, "修剪", embedder.embed_query, SearchOptions(limit=3, alpha=0.0))
    assert result.passages and "修剪" in result.passages[0].text


@pytest.mark.parametrize(
    "name", ["zh_tea_cultivation.txt", "en_bird_migration.txt", "en_fieldnote_sync_manual.md"]
)
def test_ingest_time_sentence_flags_change_no_passage(name: str) -> None:
    """Flags let search skip fetching neighbours; the passages must be exactly the same."""
    from dataclasses import replace

    from stitcher.stitch import needed_window, stitch

    # Chunks smaller than most paragraphs: some are whole sentences, some are not.
    _doc, records = sample_records(name, 40, 10)
    assert any(r.starts_sentence and r.ends_sentence for r in records)
    assert not all(r.starts_sentence and r.ends_sentence for r in records)
    for hit in records:
        unflagged = replace(hit, starts_sentence=None, ends_sentence=None)
        want = stitch(unflagged, records, carry_headings=True)
        window = needed_window(hit, 300, carry_headings=True)
        given = [r for r in records if window and r.start < window[1] and r.end > window[0]]
        got = stitch(hit, given, carry_headings=True)
        assert (got.start, got.end, got.truncated) == (want.start, want.end, want.truncated)


def test_whole_sentence_hits_need_one_round_trip(tmp_path: Path) -> None:
    from stitcher.store.memory import MemoryStore

    root = tmp_path / "docs"
    root.mkdir()
    lines = [
        f"Sentence number {i} talks about storks and cranes crossing the straits."
        for i in range(12)
    ]
    (root / "short.txt").write_text(" ".join(lines), encoding="utf-8")
    store = MemoryStore("Whole")
    embedder = FakeEmbedder()
    ingest(store, [str(root)], model_name=embedder.name, embedder=lambda: embedder)
    records = store.fetch(
        [h.record.id for h in store.hybrid("x", "storks", [1.0] * 16, limit=50, alpha=0.0)]
    )
    assert records and all(r.starts_sentence and r.ends_sentence for r in records)
    counting = CountingStore(store)
    result = search(counting, "storks cranes", embedder.embed_query, SearchOptions(alpha=0.0))
    assert counting.calls == ["hybrid"] and result.round_trips == 1
    for p in result.passages:
        assert p.text[-1] == "." and p.text[0] == "S" and not p.truncated


@pytest.mark.parametrize(
    "name", ["zh_tea_cultivation.txt", "en_bird_migration.txt", "zh_sewing_machine_manual.txt"]
)
def test_stored_context_stitches_exactly_like_fetched_neighbours(name: str) -> None:
    """The text stored around each chunk rebuilds its neighbours exactly, real ids included."""
    from dataclasses import replace

    from stitcher.stitch import _from_context, stitch, window

    doc, records = sample_records(name)
    by_id = {r.id: r for r in records}
    for hit in records:
        bare = replace(hit, starts_sentence=None, ends_sentence=None, context=None)
        want = stitch(bare, records, carry_headings=True)
        around = _from_context("T", hit, window(hit, 300))
        assert around is not None
        for piece in around:  # real ids, exact slices of the document
            assert piece.id in by_id and doc.text[piece.start : piece.end] == piece.text
        got = stitch(bare, around, carry_headings=True)
        assert (got.start, got.end, got.chunk_ids) == (want.start, want.end, want.chunk_ids)
        assert _from_context("T", hit, window(hit, 500)) is None or hit.doc_length < 500


@pytest.mark.parametrize("name", ["zh_tea_cultivation.txt", "en_bird_migration.txt"])
def test_stitch_hits_fetches_only_what_the_stored_context_lacks_in_one_request(name: str) -> None:
    """The same hits give the same passages whether their neighbours come from the stored
    context (no request) or from one request per query; without context, one request covers
    every hit that needs neighbours, one character range per document version where they meet."""
    from dataclasses import replace

    from stitcher.models import ChunkRecord, Hit, SpanRequest
    from stitcher.stitch import stitch_hits

    doc, records = sample_records(name)
    assert len(records) >= 8
    requests_seen: list[list[SpanRequest]] = []

    def fetch_spans(requests: list[SpanRequest]) -> list[ChunkRecord]:
        requests_seen.append(list(requests))
        return [
            r
            for r in records
            if any(
                (q.doc_id, q.doc_hash) == (r.doc_id, r.doc_hash) and r.start < q.hi and r.end > q.lo
                for q in requests
            )
        ]

    def passages(with_context: bool) -> tuple[list[Any], int]:
        # Without the ingest-time sentence flags every hit needs its neighbours.
        chosen = [replace(r, starts_sentence=None, ends_sentence=None) for r in records[1:8]]
        hits = [
            Hit(r if with_context else replace(r, context=None), 1.0 - i / 10)
            for i, r in enumerate(chosen[::2] + chosen[1:2])  # hits that meet, one twice over
        ]
        return stitch_hits(hits, fetch_spans, collection="T", limit=3, max_extend=300)

    from_context, requests_made = passages(with_context=True)
    assert requests_made == 0 and requests_seen == []
    fetched, requests_made = passages(with_context=False)
    assert requests_made == 1 and len(requests_seen) == 1
    ranges = sorted((q.lo, q.hi) for q in requests_seen[0])
    assert ranges and all(a[1] < b[0] for a, b in itertools.pairwise(ranges)), "ranges fused"
    assert [(p.start, p.end, p.chunk_ids, p.hit_ids) for p in fetched] == [
        (p.start, p.end, p.chunk_ids, p.hit_ids) for p in from_context
    ]
    assert 0 < len(fetched) <= 3
    for p in fetched:
        assert p.text == doc.text[p.start : p.end]


@pytest.mark.parametrize("max_extend", [300, 600])
def test_cut_sentences_need_one_round_trip_within_the_stored_context(
    loaded: Any, max_extend: int
) -> None:
    store, embedder, root = loaded
    text = loaded_text(root / "long_zh.txt")
    for sentence in cut_sentences(store, text, "docs/long_zh.txt"):
        counting = CountingStore(store)
        options = SearchOptions(limit=5, alpha=0.0, max_extend=max_extend)
        result = search(counting, sentence[: len(sentence) // 2], embedder.embed_query, options)
        assert any(sentence in p.text for p in result.passages)
        if max_extend == 300:
            assert counting.calls == ["hybrid"] and result.round_trips == 1
        else:  # beyond the stored context: one request for the neighbours
            assert len(counting.calls) <= 2


def test_without_alpha_the_model_reading_sets_it_and_the_result_says_why(loaded: Any) -> None:
    from stitcher.fusion import MIN_AUTO_ALPHA, ModelReading

    store, embedder, _ = loaded
    english_only = ModelReading("fake/english", scripts=frozenset({"latin"}))
    result = search(store, "茶树 修剪", embedder.embed_query, SearchOptions(), english_only)
    assert result.alpha == MIN_AUTO_ALPHA
    assert "fake/english cannot read" in result.alpha_reason
    assert result.passages and {p.explain.alpha for p in result.passages if p.explain} == {
        MIN_AUTO_ALPHA
    }
    as_json = result.to_json(explain=True)
    assert as_json["alpha"] == MIN_AUTO_ALPHA and as_json["alpha_reason"] == result.alpha_reason
    assert "alpha" not in result.to_json(explain=False)

    chosen = search(
        store, "茶树 修剪", embedder.embed_query, SearchOptions(alpha=0.9), english_only
    )
    assert chosen.alpha == 0.9
    # The library shows the setting by its name; the CLI spells it as its flag.
    assert chosen.alpha_reason == "alpha 0.90 as requested (alpha)"
    assert chosen.to_json(explain=True)["alpha_reason"] == chosen.alpha_reason
    flagged = chosen.spelled(lambda text: worded(text, {"alpha": "--alpha"}))
    assert flagged.alpha_reason == "alpha 0.90 as requested (--alpha)"
    assert flagged.to_json(explain=True)["alpha_reason"] == flagged.alpha_reason


def test_two_sided_passages_rank_before_one_sided_ones(loaded: Any) -> None:
    from stitcher.fusion import one_sided
    from stitcher.stitch import is_heading

    store, embedder, _ = loaded
    # Raw chunks: one hit, one explanation each.
    options = SearchOptions(limit=10, stitch=False, demote_weak=True)
    result = search(store, "birds navigate stars", embedder.embed_query, options)
    # Headings are demoted too, so they may sit among the one-sided hits; leave them aside.
    sided = [one_sided(p.explain) for p in result.passages if not is_heading(p.text.strip())]
    assert False in sided and True in sided, "the query must match both kinds of chunk"
    first_one_sided = sided.index(True)
    assert not any(flag is False for flag in sided[first_one_sided:])


FAQ_WITH_CONTENTS = (
    "Chapter 8. The Debian package management tools\n\n"
    "Table of Contents\n\n"
    "8.2. How do I display the files of an installed package?\n\n"
    "8.3. How do I find which package installed a given file?\n\n"
    "8.4. How do I remove the files a package left behind?\n\n"
    "This chapter describes the tools that install, upgrade and inspect packages on a Debian "
    "system. Most of them are front ends to one program that keeps the database of what is "
    "installed, and they can be mixed freely on one machine. Each of the questions below is "
    "answered with the command that does the job and the option it needs.\n\n"
    "8.3. How do I find which package installed a given file?\n\n"
    "Ask dpkg to search its database for the path; it names the package that owns it.\n\n"
)


def test_a_table_of_contents_ranks_after_the_section_it_names(store: Any, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "faq.txt").write_text(FAQ_WITH_CONTENTS, encoding="utf-8")
    embedder = FakeEmbedder()
    ingest(store, [str(root)], model_name=embedder.name, embedder=lambda: embedder)
    # Its words are spread over several lines of the listing, as a question's often are.
    query = "which package installed this file, and how do I remove the files a package left"
    answer = "Ask dpkg to search its database"

    def run(demote: bool) -> Any:
        options = SearchOptions(limit=5, alpha=0.0, demote_listings=demote)
        return search(store, query, embedder.embed_query, options)

    # Without the rule the listing, which repeats the query's words, comes first: the test
    # can fail.
    kept = run(demote=False).passages[0]
    assert "Table of Contents" in kept.text and answer not in kept.text
    result = run(demote=True)
    assert answer in result.passages[0].text and "Table of Contents" not in result.passages[0].text
    # The listing is still there, after the answer, and --explain / --json say why.
    from stitcher.fusion import DEMOTED_LISTING
    from stitcher.render import explain_line

    (listing,) = [p for p in result.passages if "Table of Contents" in p.text]
    assert f"{DEMOTED_LISTING}: ranked after" in explain_line(listing)
    as_json = result.to_json(explain=True)["results"]
    assert [r["explain"]["demoted"] for r in as_json].count(DEMOTED_LISTING) == 1
    assert as_json[0]["explain"]["demoted"] is None
