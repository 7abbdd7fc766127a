"""Through the real server and the installed script: every stored chunk and every hit carries
text (no chunk of blank lines or lone markup), and each hit says where to find it again
(`file:line` for text files, `file p. N` for PDFs; `line` and `page` in `--json`)."""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.test_exit_codes import run_stitcher, script_environment
from tests.test_loaders import make_pdf

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"


def wide() -> dict[str, str]:
    """The session's environment, wide enough that panel titles (long temporary paths) are
    not cut; made when called, after the fixtures set the session's home."""
    return script_environment(COLUMNS="400")


QUERIES = ["how do birds navigate at night?", "茶树 修剪", "braising liquid", "蒸汽机车"]


def has_content(text: str) -> bool:
    return any(character.isalnum() for character in text)


@pytest.fixture(scope="module")
def corpus(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """samples/ plus a two-page PDF, ingested once with the real model by the script."""
    root = tmp_path_factory.mktemp("corpus") / "docs"
    shutil.copytree(SAMPLES, root)
    # Pages longer than a chunk, so the hit on page 2 starts its own passage there.
    keeper = "Lighthouse keepers kept a log of ships, weather and lamp oil every night."
    horn = "The fog horn sounded every minute while the banks of fog lay on the strait."
    pages = [[keeper] * 5, [horn] * 5]
    (root / "keeper.pdf").write_bytes(make_pdf(pages, {"Title": "Keeper"}))
    name = "Chunktext" + uuid.uuid4().hex[:8]
    done = run_stitcher("ingest", str(root), "--collection", name, env=script_environment())
    assert done.returncode == 0, done.stderr
    return name, root


def search_json(name: str, query: str) -> list[dict[str, Any]]:
    done = run_stitcher("search", query, "--collection", name, "--json", "--limit", "5")
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return results


def test_no_stored_chunk_is_blank(corpus: tuple[str, Path], weaviate_client: Any) -> None:
    name, _ = corpus
    texts = [
        str(o.properties["text"])
        for o in weaviate_client.collections.use(name).iterator(return_properties=["text"])
    ]
    assert len(texts) > 50
    assert [text for text in texts if not has_content(text)] == []


def test_hits_carry_text_and_their_line(corpus: tuple[str, Path]) -> None:
    name, _ = corpus
    for query in QUERIES:
        results = search_json(name, query)
        assert results, query
        for hit in results:
            assert has_content(hit["text"]), hit
            if hit["path"].endswith((".txt", ".md")):
                # A line of the file: the passage begins in the paragraph that ends there
                # (exactly there for a chunk; stitching may start a rewrapped paragraph earlier).
                lines = file_text(hit["path"]).split("\n")
                above = lines[: hit["line"]]
                blank = max(
                    (i for i, line in enumerate(above[:-1]) if not line.strip()), default=-1
                )
                opening = hit["text"].lstrip()[:3]
                assert any(opening in line for line in above[blank + 1 :]), (hit, above[-3:])
            else:
                assert "line" not in hit


def file_text(path: str) -> str:
    """The file as a reader opens it (the samples hold a GB18030 file)."""
    from stitcher.loaders.decoding import decode_text

    return decode_text(Path(path).read_bytes(), path)


def test_pdf_hits_name_their_page(corpus: tuple[str, Path]) -> None:
    name, _ = corpus
    hit = next(h for h in search_json(name, "fog horn minute") if h["path"].endswith(".pdf"))
    assert hit["text"].startswith("The fog horn")
    assert hit["page"] == 2 and "line" not in hit
    done = run_stitcher(
        "search", "fog horn minute", "--collection", name, "--limit", "5", env=wide()
    )
    assert re.search(r"keeper\.pdf p\. 2\b", done.stdout), done.stdout


def test_terminal_header_shows_file_and_line(corpus: tuple[str, Path]) -> None:
    name, _ = corpus
    (first, *_) = search_json(name, "how do birds navigate at night?")
    done = run_stitcher(
        "search", "how do birds navigate at night?", "--collection", name, env=wide()
    )
    assert done.returncode == 0, done.stderr
    assert f"{first['path']}:{first['line']}" in done.stdout
