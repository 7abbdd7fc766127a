"""Filters, latest, --doc and the SQL join, through the CLI (`main`): on the in-memory store
(`stitcher.testing.cli_on_stores`, a fake embedder, no server), and the filter operators and a
search of the ingested collection also against the real server and model, where filters are
Weaviate's own."""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from stitcher.cli import main
from stitcher.ingest import IngestOptions, ingest
from stitcher.store.memory import MemoryStore
from stitcher.testing import cli_on_stores
from tests.fakes import FakeEmbedder

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"

# (file, date, tags, lang, extra front matter) — dates in several time zones on purpose.
NOTES = [
    ("n1.md", "2020-06-01T09:00:00+00:00", ["policy"], "en", {"rating": 3}),
    ("n2.md", "2021-01-01T00:30:00+08:00", ["policy", "remote-work"], "en", {"rating": 5}),
    ("n3.md", "2021-01-01T01:00:00+00:00", ["earnings"], "en", {"rating": 1}),
    ("n4.md", "2022-03-15T12:00:00-05:00", ["policy"], "zh", {"rating": 4}),
    ("n5.md", "2023-07-04T08:00:00+02:00", ["remote-work"], "zh", {"rating": 2}),
]
TRICKY = 'O\'Brien "the {chef}" \\ back {"q": [1]} ) OR 1=1 #'


def note_text(name: str, lang: str) -> str:
    if lang == "zh":
        return f"这是编号为{name}的政策通知。公司决定调整远程办公的安排，员工可以每周在家工作两天。"
    return (
        f"This is policy note {name}. The company will change its remote work rules, and staff "
        "may work from home two days a week."
    )


def write_corpus(root: Path) -> None:
    shutil.copytree(SAMPLES / "cities", root / "cities")
    notes = root / "notes"
    notes.mkdir()
    for name, date, tags, lang, extra in NOTES:
        front = {"title": f"Note {name}", "date": date, "tags": tags, "lang": lang, **extra}
        if name == "n3.md":
            front["author"] = TRICKY
        lines = [
            "---",
            *(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in front.items()),
            "---",
        ]
        (notes / name).write_text("\n".join(lines) + "\n" + note_text(name, lang) + "\n", "utf-8")


@pytest.fixture(scope="module")
def on_memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The corpus in the in-memory store; every command of the module's tests opens it."""
    root = tmp_path_factory.mktemp("filters-memory") / "corpus"
    write_corpus(root)
    name = "Flt" + uuid.uuid4().hex[:8]
    store = MemoryStore(name)
    summary = ingest(
        store, [str(root)], model_name=FakeEmbedder.name, embedder=FakeEmbedder,
        options=IngestOptions(),
    )  # fmt: skip
    assert summary.added and not summary.failed
    yield {"name": name, "root": root, "store": store}


@pytest.fixture
def collection(on_memory: dict[str, Any]) -> Iterator[dict[str, Any]]:
    store = on_memory["store"]
    with cli_on_stores(lambda name, tenant: store.sibling(name), FakeEmbedder()):
        yield on_memory


@pytest.fixture(scope="module")
def on_weaviate(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The corpus ingested by the CLI into the real server with the real model."""
    root = tmp_path_factory.mktemp("filters") / "corpus"
    write_corpus(root)
    name = "Flt" + uuid.uuid4().hex[:8]
    assert main(["ingest", str(root), "--collection", name]) == 0
    return {"name": name, "root": root}


@pytest.fixture(params=["memory", pytest.param("weaviate", marks=pytest.mark.integration)])
def any_store(request: pytest.FixtureRequest) -> Any:
    """The collection on either store: for what is also about Weaviate's own filters."""
    if request.param == "weaviate":
        return request.getfixturevalue("on_weaviate")
    return request.getfixturevalue("collection")


def search(capsys: pytest.CaptureFixture[str], coll: dict[str, Any], *args: str) -> Any:
    code = main(["search", *args, "--collection", coll["name"], "--json", "--limit", "20"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def utc(date: str) -> datetime:
    return datetime.fromisoformat(date).astimezone(timezone.utc)


def notes_where(pred: Any) -> set[str]:
    return {f"corpus/notes/{n}" for n, d, t, lang, e in NOTES if pred(n, utc(d), t, lang, e)}


def doc_ids(out: Any) -> set[str]:
    return {r["doc_id"] for r in out["results"]}


CASES = [
    (["tags=policy"], lambda n, d, t, lang, e: "policy" in t),
    (["tags=earnings,remote-work"], lambda n, d, t, lang, e: {"earnings", "remote-work"} & set(t)),
    (["lang=zh"], lambda n, d, t, lang, e: lang == "zh"),
    (["lang!=zh", "tags~polic"], lambda n, d, t, lang, e: lang != "zh" and "policy" in t),
    (["rating>=4"], lambda n, d, t, lang, e: e["rating"] >= 4),
    (["rating<2"], lambda n, d, t, lang, e: e["rating"] < 2),
    # 2021-01-01T00:30+08:00 is 2020-12-31 in UTC: dates compare as instants, not as strings
    (["date<2021-01-01T00:00:00Z"], lambda n, d, t, lang, e: d < utc("2021-01-01T00:00:00+00:00")),
    (["date>=2021-01-01"], lambda n, d, t, lang, e: d >= utc("2021-01-01T00:00:00+00:00")),
    ([f"author={TRICKY}"], lambda n, d, t, lang, e: n == "n3.md"),
]


@pytest.mark.parametrize(("where", "expected"), CASES)
def test_each_operator_narrows_latest(
    any_store: dict[str, Any], capsys: pytest.CaptureFixture[str], where: list[str], expected: Any
) -> None:
    args = [a for w in where for a in ("--where", w)] + ["--where", "doc_id~notes"]
    out = search(capsys, any_store, "--latest", *args)
    assert doc_ids(out) == notes_where(expected)


@pytest.mark.parametrize(("where", "expected"), CASES)
def test_each_operator_narrows_a_stitched_search(
    any_store: dict[str, Any], capsys: pytest.CaptureFixture[str], where: list[str], expected: Any
) -> None:
    args = [a for w in where for a in ("--where", w)] + ["--where", "doc_id~notes"]
    out = search(capsys, any_store, "remote work policy 远程办公", *args)
    wanted = notes_where(expected)
    assert doc_ids(out) <= wanted and doc_ids(out)  # never outside the filter
    for r in out["results"]:  # stitching never left the filtered document
        assert set(r["hit_ids"]) <= set(r["chunk_ids"])


def test_where_any_is_or(collection: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    out = search(
        capsys,
        collection,
        "--latest",
        "--where-any",
        "lang=zh",
        "--where-any",
        "rating=1",
        "--where",
        "doc_id~notes",
    )
    assert doc_ids(out) == notes_where(lambda n, d, t, lang, e: lang == "zh" or e["rating"] == 1)


def test_latest_orders_by_date(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out = search(capsys, collection, "--where", "doc_id~notes")
    order = [r["doc_id"].rsplit("/", 1)[-1] for r in out["results"]]
    expected = [n for n, *_ in sorted(NOTES, key=lambda row: utc(row[1]), reverse=True)]
    assert order == expected


def test_unknown_field_lists_the_known_ones(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["search", "x", "--collection", collection["name"], "--where", "colour=red"])
    err = capsys.readouterr().err
    assert code == 2 and "colour" in err and "rating" in err and "tags" in err


def test_bad_date_says_the_format(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["search", "x", "--collection", collection["name"], "--where", "date>=last week"])
    err = capsys.readouterr().err
    assert code == 2 and "2021-03-04" in err


def test_ambiguous_doc_exits_2_with_candidates(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["search", "food", "--collection", collection["name"], "--doc", "Lyon"])
    err = capsys.readouterr().err
    assert code == 2 and "lyon.md" in err and "lyon.zh.md" in err


def test_doc_selects_one_document(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out = search(capsys, collection, "food and markets", "--doc", "porto")
    assert doc_ids(out) == {"corpus/cities/porto.md"}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sql_join_narrows_to_the_named_documents(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "cities.sqlite"
    shutil.copy(SAMPLES / "cities.sqlite", db)
    sql = "SELECT city FROM city_stats ORDER BY population DESC LIMIT 1"
    out = search(capsys, collection, "arts and culture", "--sql", sql, "--db", str(db))
    assert out["sql"] == sql and out["sql_rows"] == [["Chengdu"]]
    assert out["results"] and {r["title"] for r in out["results"]} == {"Chengdu"}
    assert doc_ids(out) <= {"corpus/cities/chengdu.md", "corpus/cities/chengdu.zh.md"}


def test_sql_that_writes_fails_and_leaves_the_database(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "cities.sqlite"
    shutil.copy(SAMPLES / "cities.sqlite", db)
    before = sha(db)
    code = main(
        [
            "search",
            "x",
            "--collection",
            collection["name"],
            "--sql",
            "DROP TABLE city_stats",
            "--db",
            str(db),
        ]
    )
    assert code == 1 and "read-only" in capsys.readouterr().err
    assert sha(db) == before


def test_fields_and_stats(collection: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fields", "--collection", collection["name"], "--json"]) == 0
    fields = {f["name"]: f for f in json.loads(capsys.readouterr().out)}
    assert fields["rating"]["type"] == "int" and fields["date"]["type"] == "date"
    assert fields["tags"]["type"] == "text[]" and fields["country"]["examples"]
    assert main(["stats", "--collection", collection["name"], "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    files = list(collection["root"].rglob("*.md"))
    assert stats["documents"] == len(files) and stats["chunks"] >= len(files)
