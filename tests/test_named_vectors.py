"""`--model bilingual` with a named vector per model part, end to end (issue 35 item 3).

Through the installed `stitcher` script against the session's real Weaviate: a new bilingual
collection holds `latin` and `han` named vectors (HNSW each), each chunk only its part's;
questions in both languages find their passage; export and import keep the layout; doctor and
adopt understand it; a bilingual collection made before (one zero-padded vector, flat index)
keeps ingesting and searching as it did.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus
from stitcher.models import VECTOR_INDEX_FLAT, CollectionSettings
from tests.test_exit_codes import assert_one_error_line, run_stitcher
from tests.test_multilingual import CHINESE_QUESTION, DOCUMENTS, ENGLISH_QUESTION

pytestmark = pytest.mark.integration

#: The question of each language and the one file that answers it.
QUESTIONS = {CHINESE_QUESTION: "train.txt", ENGLISH_QUESTION: "birds.txt"}
#: Files whose chunks are Chinese (embedded by the han part), the others Latin.
CHINESE_FILES = {"tea.txt", "train.txt"}


def _documents(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in DOCUMENTS.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _ok(*args: str) -> str:
    result = run_stitcher(*args)
    assert result.returncode == ExitStatus.OK, (args, result.stderr)
    return result.stdout


def _search(collection: str, query: str) -> list[tuple[str, str]]:
    out = json.loads(_ok("search", query, "--collection", collection, "--json", "-k", "3"))
    return [(Path(r["path"]).name, r["text"]) for r in out["results"]]


def _doctor(collection: str) -> dict[str, Any]:
    checks = json.loads(_ok("doctor", "--json", "-c", collection, "--model", "bilingual"))
    (check,) = [c for c in checks if c["check"] == f"collection {collection}"]
    return dict(check)


def _vectors_held(client: Any, collection: str) -> dict[str, set[str]]:
    """File name -> the names of the vectors its chunks carry."""
    held: dict[str, set[str]] = {}
    for obj in client.collections.use(collection).iterator(include_vector=True):
        held.setdefault(Path(str(obj.properties["source"])).name, set()).update(obj.vector)
    return held


@pytest.fixture(scope="module")
def named_collection(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    collection = "Named" + uuid.uuid4().hex[:10]
    root = _documents(tmp_path_factory.mktemp("named"))
    _ok("ingest", str(root), "--collection", collection, "--model", "bilingual")
    return collection


def test_a_bilingual_collection_has_a_named_hnsw_vector_per_part(
    weaviate_client: Any, named_collection: str
) -> None:
    config = weaviate_client.collections.use(named_collection).config.get()
    assert set(config.vector_config) == {"latin", "han"}
    for named in config.vector_config.values():
        assert "hnsw" in str(named.vector_index_config.vector_index_type()).lower()
    held = _vectors_held(weaviate_client, named_collection)
    assert held == {name: {"han"} if name in CHINESE_FILES else {"latin"} for name in DOCUMENTS}
    stats = json.loads(_ok("stats", "--collection", named_collection, "--json"))
    assert (stats["vectors"], stats["vector_index"]) == ("by-script", "hnsw")
    assert stats["model"].startswith("by-script(")


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_a_question_finds_its_passage_in_its_part(named_collection: str, question: str) -> None:
    found = _search(named_collection, question)
    assert found[0][0] == QUESTIONS[question], found


def test_export_and_import_keep_the_named_vectors(
    weaviate_client: Any, named_collection: str, tmp_path: Path
) -> None:
    path = tmp_path / "named.jsonl"
    _ok("export", "-c", named_collection, str(path))
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header["settings"]["vectors"] == "by-script"
    copy = "Copy" + uuid.uuid4().hex[:10]
    _ok("import", str(path), "-c", copy)
    config = weaviate_client.collections.use(copy).config.get()
    assert set(config.vector_config) == {"latin", "han"}
    assert _vectors_held(weaviate_client, copy) == _vectors_held(weaviate_client, named_collection)
    for question in QUESTIONS:
        assert _search(copy, question) == _search(named_collection, question)
    again = tmp_path / "again.jsonl"
    _ok("export", "-c", copy, str(again))
    # The same objects and vectors (the header names its own collection).
    assert (
        path.read_text(encoding="utf-8").splitlines()[1:]
        == (again.read_text(encoding="utf-8").splitlines()[1:])
    )


def test_doctor_reports_the_layout_and_adopt_leaves_it_alone(named_collection: str) -> None:
    check = _doctor(named_collection)
    assert check["status"] == "ok", check
    assert "named vectors latin, han (hnsw index each)" in check["detail"]
    adopt = run_stitcher("adopt", "--collection", named_collection)
    assert adopt.returncode == ExitStatus.USAGE, adopt.stderr
    assert "already in stitcher's layout" in assert_one_error_line(adopt.stderr)


def test_a_changed_document_reuses_its_named_vectors(weaviate_client: Any, tmp_path: Path) -> None:
    collection = "Reuse" + uuid.uuid4().hex[:10]
    root = _documents(tmp_path / "docs")
    # Several chunks each, so that an added sentence leaves the first ones unchanged.
    long = {"rail.txt": DOCUMENTS["rail.txt"] * 4, "tea.txt": DOCUMENTS["tea.txt"] * 6}
    for name, text in long.items():
        (root / name).write_text(text, encoding="utf-8")
    ingest = ("ingest", str(root), "--collection", collection, "--model", "bilingual", "--json")
    _ok(*ingest)
    # Unchanged chunks of a changed document keep their vectors, read back under their part's
    # name: a Chinese document's, then an English one's.
    for name, added in (
        ("tea.txt", "茶叶要放在阴凉干燥的地方。"),
        ("rail.txt", " It closed in 1962."),
    ):
        (root / name).write_text(long[name] + added, "utf-8")
        summary = json.loads(_ok(*ingest))
        assert summary["updated"] == 1 and summary["reused_vectors"] >= 1, (name, summary)
    held = _vectors_held(weaviate_client, collection)
    assert (held["tea.txt"], held["rail.txt"]) == ({"han"}, {"latin"})


def test_an_older_single_vector_bilingual_collection_keeps_working(
    weaviate_client: Any, named_collection: str, tmp_path: Path
) -> None:
    from stitcher.store.weaviate import WeaviateStore

    model = json.loads(_ok("stats", "--collection", named_collection, "--json"))["model"]
    old = "OldBilingual" + uuid.uuid4().hex[:8]
    # What `--model bilingual` made before named vectors: one vector, flat index, no `vectors`.
    WeaviateStore(weaviate_client, old).create(
        CollectionSettings(
            model=model,
            dimension=384,
            chunk_size=250,
            chunk_overlap=50,
            vector_index=VECTOR_INDEX_FLAT,
        )
    )
    _ok("ingest", str(_documents(tmp_path / "old")), "--collection", old, "--model", "bilingual")
    config = weaviate_client.collections.use(old).config.get()
    assert set(config.vector_config) == {"default"}
    assert "flat" in str(config.vector_config["default"].vector_index_config.vector_index_type())
    assert set().union(*_vectors_held(weaviate_client, old).values()) == {"default"}
    for question, answer in QUESTIONS.items():
        assert _search(old, question)[0][0] == answer
    stats = json.loads(_ok("stats", "--collection", old, "--json"))
    assert (stats["vectors"], stats["vector_index"]) == ("single", "flat")
    check = _doctor(old)
    assert check["status"] == "ok", check
    assert "one vector, flat index" in check["detail"]
    assert "a new collection of this model holds its vectors as 'by-script'" in check["detail"]
