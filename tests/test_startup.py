"""What a fresh `stitcher` process loads, and the start-up work it avoids (issue 16 item 7).

No timings here (bench/startup.py measures them): these tests check the *structure* that keeps
start-up short, through the installed script in a subprocess. Python's own import log
(PYTHONPROFILEIMPORTTIME=1, the variable form of `-X importtime`) names every module the real
command imported, so nothing is hooked or faked.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.test_exit_codes import run_stitcher, script_environment

#: Never needed to answer a query: torch alone takes ~10 s to import.
NEVER_ON_THE_QUERY_PATH = ("torch", "sentence_transformers", "transformers", "langchain")

#: Not needed to print help either.
NOT_FOR_HELP = ("weaviate", "onnxruntime", "numpy", "tokenizers", "grpc", "pydantic", "httpx")


def imported_modules(import_log: str) -> set[str]:
    """Module names from Python's import-time log (`import time: self | cumulative | name`)."""
    names = set()
    for line in import_log.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names


def top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def run_logging_imports(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    result = run_stitcher(*args, env=script_environment(PYTHONPROFILEIMPORTTIME="1"))
    return result, top_level(imported_modules(result.stderr))


def test_the_import_log_parser_reads_pythons_format() -> None:
    log = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       101 |        101 |   _io\n"
        "import time:      9938 |    2486952 | weaviate.collections\n"
        "error: not a log line\n"
    )
    assert imported_modules(log) == {"_io", "weaviate.collections"}
    assert top_level(imported_modules(log)) == {"_io", "weaviate"}


def test_help_loads_neither_the_client_nor_the_model() -> None:
    result, modules = run_logging_imports("--help")
    assert result.returncode == 0, result.stderr
    assert "search" in result.stdout
    assert {"typer", "stitcher"} <= modules  # the log was read at all
    assert not modules & {*NOT_FOR_HELP, *NEVER_ON_THE_QUERY_PATH}, sorted(modules)


@pytest.mark.integration
def test_a_search_loads_the_client_and_onnx_but_no_torch_or_langchain(
    weaviate_server: Any, tmp_path: Path
) -> None:
    from tests.test_ingest import EN

    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "rail.txt").write_text(EN, encoding="utf-8")
    collection = "Startup" + uuid.uuid4().hex[:10]
    ingested = run_stitcher("ingest", str(corpus), "--collection", collection)
    assert ingested.returncode == 0, ingested.stderr
    query = " ".join(EN.split()[:6])

    result, modules = run_logging_imports("search", query, "--collection", collection, "--json")

    assert result.returncode == 0, result.stderr
    passages = json.loads(result.stdout)["results"]
    assert passages and passages[0]["path"].endswith("rail.txt")
    # It really went the ONNX way to a real server (so the absence below means something) ...
    assert {"weaviate", "onnxruntime", "stitcher"} <= modules, sorted(modules)
    assert "using sentence-transformers" not in result.stderr
    # ... without the ingest-side stack.
    assert not modules & set(NEVER_ON_THE_QUERY_PATH), sorted(modules)
    assert not {m for m in modules if m.startswith("langchain")}, sorted(modules)


def test_the_client_import_defers_model_building_and_restores_pydantic() -> None:
    code = """
        import json
        from pydantic import BaseModel, ValidationError
        from pydantic._internal._config import config_defaults
        from stitcher.store.weaviate.connection import import_weaviate

        weaviate = import_weaviate()
        from weaviate.classes.config import DataType, Property

        deferred = not Property.__pydantic_complete__
        prop = Property(name="title", data_type=DataType.TEXT)  # built on first use
        try:
            Property(name=["not", "a", "name"], data_type=DataType.TEXT)
            rejects = False
        except ValidationError:
            rejects = True

        class Later(BaseModel):  # a model of anyone else, defined afterwards
            x: int

        print(json.dumps({
            "deferred": deferred, "name": prop.name, "rejects": rejects,
            "default_restored": config_defaults["defer_build"] is False,
            "later_built": Later.__pydantic_complete__,
            "same_module": import_weaviate() is weaviate,
        }))
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=script_environment(),
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "deferred": True,
        "name": "title",
        "rejects": True,
        "default_restored": True,
        "later_built": True,
        "same_module": True,
    }


# --- the ONNX model's weights, stored beside it -----------------------------------------------


def _tiny_inline_model(path: Path) -> Any:
    """An ONNX graph `token_embeddings = input @ W` with W (64x64 floats) stored inline."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = np.random.default_rng(7).standard_normal((64, 64)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["token_embeddings"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 64])],
        [helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, [None, 64])],
        initializer=[numpy_helper.from_array(weights, "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save_model(model, str(path))
    return weights


def test_an_inline_export_gets_its_weights_moved_out_once(tmp_path: Path) -> None:
    import numpy as np

    from stitcher.embed import onnx as embed_onnx

    export = tmp_path / "onnx" / "tiny-v1"
    export.mkdir(parents=True)
    model_path = export / embed_onnx.MODEL_FILE
    weights = _tiny_inline_model(model_path)
    inline_size = model_path.stat().st_size
    x = np.ones((2, 64), dtype=np.float32)

    session = embed_onnx._open_session(model_path)

    (out,) = session.run(["token_embeddings"], {"x": x})
    np.testing.assert_allclose(out, x @ weights, rtol=1e-5)
    stored = export / embed_onnx.WEIGHTS_FILE
    assert stored.stat().st_size >= weights.nbytes
    assert model_path.stat().st_size < inline_size - weights.nbytes // 2
    assert sorted(p.name for p in export.parent.iterdir()) == ["tiny-v1"]  # no staging left
    # The next process opens the pair as it is, with the same result.
    again = embed_onnx._open_session(model_path)
    (out_again,) = again.run(["token_embeddings"], {"x": x})
    np.testing.assert_array_equal(out_again, out)


def test_an_export_that_cannot_be_rewritten_still_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from stitcher.embed import onnx as embed_onnx

    export = tmp_path / "onnx" / "tiny-v1"
    export.mkdir(parents=True)
    model_path = export / embed_onnx.MODEL_FILE
    weights = _tiny_inline_model(model_path)
    before = model_path.read_bytes()

    def read_only_cache(model: Path, work_dir: Path) -> None:
        raise PermissionError(f"read-only: {work_dir}")

    monkeypatch.setattr(embed_onnx, "_store_weights_apart", read_only_cache)
    session = embed_onnx._open_session(model_path)

    (out,) = session.run(["token_embeddings"], {"x": np.ones((1, 64), dtype=np.float32)})
    np.testing.assert_allclose(out, np.ones((1, 64), dtype=np.float32) @ weights, rtol=1e-5)
    assert model_path.read_bytes() == before
    assert not (export / embed_onnx.WEIGHTS_FILE).exists()
