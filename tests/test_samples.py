"""Sanity checks on the demo corpus (samples/) and the news dataset (datasets/news/).

These files are test fixtures for loaders, chunking, filtering and the graph feature, so the
properties they were written to exercise are asserted here: encodings, hard wraps, front
matter, the city table matching the city articles, and answerable seed questions.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
NEWS = ROOT / "datasets" / "news"
GB18030_SAMPLE = SAMPLES / "zh_rail_history.gb18030.txt"
BINARY_SUFFIXES = {".sqlite"}
CJK = re.compile(r"[\u4e00-\u9fff]")


def load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """YAML front matter between leading `---` lines, and the body after it."""
    match = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "no front matter"
    meta = yaml.safe_load(match.group(1))
    assert isinstance(meta, dict)
    return meta, text[match.end() :]


def sample_files() -> list[Path]:
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


# --- samples/ -------------------------------------------------------------------------------


def test_samples_are_utf8_except_the_gb18030_file() -> None:
    checked = 0
    for path in sample_files():
        if path.suffix in BINARY_SUFFIXES or path == GB18030_SAMPLE:
            continue
        path.read_bytes().decode("utf-8")  # strict: raises on any invalid byte
        checked += 1
    assert checked >= 10


def test_gb18030_sample_is_not_utf8_and_decodes_to_chinese() -> None:
    raw = GB18030_SAMPLE.read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    text = raw.decode("gb18030")
    assert len(CJK.findall(text)) > 800
    assert "铁路" in text and "「" in text


def test_samples_mix_languages_and_formats() -> None:
    top = [p for p in SAMPLES.iterdir() if p.is_file() and p.name != "README.md"]
    suffixes = {p.suffix for p in top}
    assert {".txt", ".md", ".html"} <= suffixes
    zh = [p for p in top if p.name.startswith("zh_")]
    en = [p for p in top if p.name.startswith("en_")]
    assert len(zh) >= 3 and len(en) >= 2
    total = sum(p.stat().st_size for p in top if p.suffix in {".txt", ".md", ".html"})
    assert 20_000 <= total <= 45_000, total


def unwrap_paragraphs(text: str, joiner: str) -> list[str]:
    return [
        joiner.join(line.strip() for line in block.splitlines())
        for block in re.split(r"\n\s*\n", text)
        if block.strip()
    ]


@pytest.mark.parametrize(
    ("name", "joiner"),
    [
        ("zh_tea_cultivation.txt", ""),
        ("zh_sewing_machine_manual.txt", ""),
        ("en_bird_migration.txt", " "),
        ("en_braising_wrapped.txt", " "),
        ("en_fieldnote_sync_manual.md", " "),
        ("zh_homemade_tofu.md", ""),
    ],
)
def test_prose_paragraphs_are_long_enough_to_split_sentences(name: str, joiner: str) -> None:
    text = (SAMPLES / name).read_text(encoding="utf-8")
    long_ones = [p for p in unwrap_paragraphs(text, joiner) if len(p) >= 380]
    assert len(long_ones) >= 3
    assert all(len(p) <= 900 for p in long_ones)


def test_gb18030_paragraphs_are_long() -> None:
    text = GB18030_SAMPLE.read_bytes().decode("gb18030")
    assert sum(len(p) >= 400 for p in unwrap_paragraphs(text, "")) >= 3


def test_chinese_samples_use_full_width_terminators_and_closing_quotes() -> None:
    text = "".join(
        (SAMPLES / n).read_text(encoding="utf-8")
        for n in ("zh_tea_cultivation.txt", "zh_sewing_machine_manual.txt", "zh_homemade_tofu.md")
    )
    for mark in ("。", "！", "？", "。”", "」"):
        assert mark in text, mark


def test_english_samples_end_sentences_inside_quotes() -> None:
    text = (SAMPLES / "en_bird_migration.txt").read_text(encoding="utf-8")
    assert '."' in text or ',"' in text
    assert "!" in text and "?" in text


def test_zh_manual_is_hard_wrapped_at_36_characters() -> None:
    lines = (SAMPLES / "zh_sewing_machine_manual.txt").read_text(encoding="utf-8").splitlines()
    body = [line for line in lines[1:] if line]
    assert max(len(line) for line in body) == 36
    # A hard wrap ignores sentences: many lines must end mid-sentence.
    assert sum(not line.endswith(("。", "！", "？", "”", "」")) for line in body) > len(body) // 2


def test_en_braising_is_hard_wrapped_at_72_columns() -> None:
    lines = (SAMPLES / "en_braising_wrapped.txt").read_text(encoding="utf-8").splitlines()
    assert max(len(line) for line in lines) <= 72
    assert sum(len(line) > 60 for line in lines) > 20


def test_markdown_front_matter_has_title_date_tags() -> None:
    files = [p for p in SAMPLES.rglob("*.md") if p.name != "README.md"]
    assert len(files) >= 11
    for path in files:
        meta, body = split_front_matter(path.read_text(encoding="utf-8"))
        assert isinstance(meta["title"], str) and meta["title"], path
        assert isinstance(meta["date"], dt.date), path
        assert isinstance(meta["tags"], list) and meta["tags"], path
        assert body.strip(), path
    for name in ("en_fieldnote_sync_manual.md", "zh_homemade_tofu.md"):
        meta, _ = split_front_matter((SAMPLES / name).read_text(encoding="utf-8"))
        assert isinstance(meta["author"], str)


def test_manual_code_block_and_table_have_no_sentence_terminators() -> None:
    text = (SAMPLES / "en_fieldnote_sync_manual.md").read_text(encoding="utf-8")
    code = re.search(r"```\n(.*?)```", text, re.DOTALL)
    assert code and len(code.group(1)) > 250
    table = "\n".join(line for line in text.splitlines() if line.startswith("|"))
    assert table.count("\n") >= 5
    for block in (code.group(1), table):
        assert not re.search(r"[.!?。！？]", block)


def test_html_sample_has_title_date_and_a_script_to_skip() -> None:
    html = (SAMPLES / "cape_merrow_lighthouse.html").read_text(encoding="utf-8")
    assert "<title>The Keepers of Cape Merrow Light</title>" in html
    assert re.search(r'<meta name="date" content="\d{4}-\d{2}-\d{2}">', html)
    script = re.search(r"<script>(.*?)</script>", html, re.DOTALL)
    assert script and "zqxv-script-text-must-not-be-indexed" in script.group(1)
    outside = html[: script.start()] + html[script.end() :]
    assert "zqxv-script-text-must-not-be-indexed" not in outside
    # The demo ingests every sample, so no other file may contain the marker either.
    for path in sample_files():
        if path.suffix not in BINARY_SUFFIXES and path.suffix != ".html":
            assert b"zqxv-script" not in path.read_bytes(), path


def city_articles() -> list[tuple[Path, dict[str, Any], str]]:
    out = []
    for path in sorted((SAMPLES / "cities").glob("*.md")):
        meta, body = split_front_matter(path.read_text(encoding="utf-8"))
        out.append((path, meta, body))
    return out


def read_city_rows(path: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{path.as_posix()}?mode=ro", uri=True)
    try:
        return list(
            conn.execute("SELECT city, country, population, area_km2 FROM city_stats ORDER BY city")
        )
    finally:
        conn.close()


def test_city_articles_match_the_city_table() -> None:
    rows = read_city_rows(SAMPLES / "cities.sqlite")
    countries = {city: country for city, country, _, _ in rows}
    articles = city_articles()
    assert len([a for a in articles if a[1]["lang"] == "en"]) == 6
    assert len([a for a in articles if a[1]["lang"] == "zh"]) >= 2
    assert {meta["title"] for _, meta, _ in articles} == set(countries)
    for path, meta, body in articles:
        assert meta["tags"] == ["city"], path
        assert meta["country"] == countries[meta["title"]], path
        if meta["lang"] == "zh":
            assert len(CJK.findall(body)) > 200, path
        assert re.search(r"^## (Arts and culture|艺术与文化)$", body, re.MULTILINE), path
    for city, _, population, area in rows:
        assert isinstance(population, int) and population > 100_000, city
        assert isinstance(area, float) and area > 0, city


def test_most_populous_city_has_arts_articles_in_both_languages() -> None:
    rows = read_city_rows(SAMPLES / "cities.sqlite")
    top = max(rows, key=lambda r: r[2])[0]
    langs = {meta["lang"] for _, meta, _ in city_articles() if meta["title"] == top}
    assert langs == {"en", "zh"}


def test_make_cities_db_reproduces_the_committed_file(tmp_path: Path) -> None:
    module = load_module(SAMPLES / "make_cities_db.py", "make_cities_db")
    rebuilt = module.build_cities_db(tmp_path / "cities.sqlite")
    committed = SAMPLES / "cities.sqlite"
    assert read_city_rows(rebuilt) == read_city_rows(committed)
    # Header bytes 92-99 record the SQLite library version; the rest must match exactly.
    new, old = bytearray(rebuilt.read_bytes()), bytearray(committed.read_bytes())
    new[92:100] = old[92:100] = b"\0" * 8
    assert new == old
    assert not (tmp_path / "cities.sqlite.tmp").exists()


# --- datasets/news/ -------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def news() -> dict[str, Any]:
    orgs = read_jsonl(NEWS / "organizations.jsonl")
    people = read_jsonl(NEWS / "people.jsonl")
    articles = []
    for path in sorted((NEWS / "articles").glob("*.md")):
        meta, body = split_front_matter(path.read_text(encoding="utf-8"))
        articles.append({"path": path.relative_to(NEWS).as_posix(), "meta": meta, "body": body})
    surface: dict[str, str] = {}
    for org in orgs:
        for form in [org["name"], *org["aliases"]]:
            assert form not in surface, f"ambiguous alias {form!r}"
            surface[form] = org["id"]
    return {
        "orgs": {o["id"]: o for o in orgs},
        "people": people,
        "articles": articles,
        "surface": surface,
    }


def mentioned(article: dict[str, Any], surface: dict[str, str]) -> set[str]:
    return {surface[m] for m in article["meta"]["mentions"]}


def test_entities_are_consistent(news: dict[str, Any]) -> None:
    orgs = news["orgs"]
    assert len(orgs) >= 30
    assert len({o["country"] for o in orgs.values()}) >= 5
    assert sum(o["country"] == "France" for o in orgs.values()) >= 3
    assert any(CJK.search(a) for o in orgs.values() for a in o["aliases"])
    for org in orgs.values():
        assert {"id", "name", "aliases", "city", "country", "industry"} <= set(org)
        for ref in org["supplier_of"] + org["invested_in"]:
            assert ref in orgs and ref != org["id"]
    for person in news["people"]:
        assert all(ref in orgs for ref in person["board_member_of"])
    rod = [p for p in news["people"] if p["name"] == "Rod Johnson"]
    assert len(rod) == 1 and 2 <= len(rod[0]["board_member_of"]) <= 3
    hyundai = [o["id"] for o in orgs.values() if o["name"] == "Hyundai Motor"]
    suppliers = [o for o in orgs.values() if hyundai[0] in o["supplier_of"]]
    assert 3 <= len(suppliers) <= 5


def test_articles_have_valid_front_matter(news: dict[str, Any]) -> None:
    articles = news["articles"]
    assert len(articles) >= 100
    zh = [a for a in articles if a["meta"]["lang"] == "zh"]
    assert len(zh) / len(articles) >= 0.35
    years = set()
    for article in articles:
        meta, body = article["meta"], article["body"]
        assert meta["lang"] in {"en", "zh"}
        assert isinstance(meta["title"], str) and meta["title"]
        assert isinstance(meta["date"], dt.date)
        years.add(meta["date"].year)
        assert -1.0 <= meta["sentiment"] <= 1.0
        assert meta["tags"] and all(isinstance(t, str) for t in meta["tags"])
        if meta["lang"] == "en":
            assert 120 <= len(body.split()) <= 400, article["path"]
        else:
            assert 200 <= len(re.sub(r"\s", "", body)) <= 600, article["path"]
    assert years == set(range(2019, 2025))
    bodies = [a["body"] for a in articles]
    assert len(set(bodies)) == len(bodies)


def test_every_mention_resolves_and_is_written_in_the_article(news: dict[str, Any]) -> None:
    for article in news["articles"]:
        mentions = article["meta"]["mentions"]
        assert mentions, article["path"]
        text = article["meta"]["title"] + "\n" + article["body"]
        for mention in mentions:
            assert mention in news["surface"], (article["path"], mention)
            assert mention in text, (article["path"], mention)


def seed_answers(news: dict[str, Any]) -> dict[str, list[str]]:
    orgs, surface = news["orgs"], news["surface"]
    rod = next(p for p in news["people"] if p["name"] == "Rod Johnson")
    hyundai = next(o["id"] for o in orgs.values() if o["name"] == "Hyundai Motor")
    suppliers = {o["id"] for o in orgs.values() if hyundai in o["supplier_of"]}
    french = {o["id"] for o in orgs.values() if o["country"] == "France"}
    articles = news["articles"]
    return {
        "rod_johnson_remote_work": [
            a["path"]
            for a in articles
            if "remote-work" in a["meta"]["tags"]
            and mentioned(a, surface) & set(rod["board_member_of"])
        ],
        "negative_news_france": [
            a["path"]
            for a in articles
            if a["meta"]["sentiment"] < -0.5 and mentioned(a, surface) & french
        ],
        "hyundai_supplier_news": [a["path"] for a in articles if mentioned(a, surface) & suppliers],
    }


def test_seed_questions_have_answers_with_distractors(news: dict[str, Any]) -> None:
    answers = seed_answers(news)
    articles = news["articles"]
    for key, paths in answers.items():
        assert paths, key
        assert len(paths) < len(articles) // 2, key
    remote = [a["path"] for a in articles if "remote-work" in a["meta"]["tags"]]
    assert set(remote) - set(answers["rod_johnson_remote_work"])
    negative = [a["path"] for a in articles if a["meta"]["sentiment"] < -0.5]
    assert set(negative) - set(answers["negative_news_france"])
    supply = [a["path"] for a in articles if "supply-chain" in a["meta"]["tags"]]
    assert set(supply) - set(answers["hyundai_supplier_news"])
    # Both languages must be needed to answer each question completely.
    for key, paths in answers.items():
        langs = {a["meta"]["lang"] for a in articles if a["path"] in paths}
        assert langs == {"en", "zh"}, key


def test_answers_json_matches_the_files(news: dict[str, Any]) -> None:
    stored = json.loads((NEWS / "answers.json").read_text(encoding="utf-8"))
    for key, paths in seed_answers(news).items():
        assert stored[key]["articles"] == paths, key
    assert stored["rod_johnson_remote_work"]["organizations"] == [
        "Atelier Numérique",
        "Northwind Analytics",
    ]


def test_generator_is_deterministic(tmp_path: Path) -> None:
    module = load_module(NEWS / "generate.py", "news_generate")
    module.OUT_DIR = tmp_path
    module.main()
    committed = sorted(
        p.relative_to(NEWS)
        for p in NEWS.rglob("*")
        if p.is_file() and p.suffix in {".md", ".jsonl", ".json"} and p.name != "README.md"
    )
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert fresh == committed
    for rel in fresh:
        assert (tmp_path / rel).read_bytes() == (NEWS / rel).read_bytes(), rel
