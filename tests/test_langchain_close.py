"""The retriever and the agent tool close their connection: `close()`, a `with` block, or — for
a script that forgets — the session's finalizer, so that nothing warns at exit.

Each script runs in a subprocess with ResourceWarnings turned into errors (`-W` and
PYTHONWARNINGS), against the session's real server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stitcher.api import Stitcher

WORKTREE = Path(__file__).resolve().parent.parent
SAMPLES = WORKTREE / "samples"
COLLECTION = f"CloseTest{uuid.uuid4().hex[:8]}"

SCRIPTS = {
    "never closed": """
        retriever = Stitcher(collection=NAME).as_retriever(k=1)
        print(retriever.invoke(QUERY)[0].metadata["source"])
    """,
    "with": """
        with Stitcher(collection=NAME).as_retriever(k=1) as retriever:
            print(retriever.invoke(QUERY)[0].metadata["source"])
    """,
    "close()": """
        retriever = StitchedRetriever(collection=NAME, k=1)
        print(retriever.invoke(QUERY)[0].metadata["source"])
        retriever.close()
    """,
    "tool never closed": """
        tool = stitched_search_tool(Stitcher(collection=NAME))
        print(tool.invoke({"query": QUERY, "limit": 1}))
    """,
    "tool with": """
        with stitched_search_tool(Stitcher(collection=NAME)) as tool:
            print(tool.invoke({"query": QUERY, "limit": 1}))
    """,
}
PREAMBLE = """
import sys
from stitcher.api import Stitcher
from stitcher.langchain import StitchedRetriever, stitched_search_tool
NAME, QUERY = sys.argv[1], "birds migrate at night"
"""


@pytest.fixture(scope="module")
def collection(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("close-corpus") / "birds"
    root.mkdir()
    (root / "birds.txt").write_text(
        (SAMPLES / "en_bird_migration.txt").read_text(encoding="utf-8"), encoding="utf-8"
    )
    with Stitcher(collection=COLLECTION) as stitcher:
        stitcher.ingest([str(root)])
    try:
        yield COLLECTION
    finally:
        with Stitcher(collection=COLLECTION) as stitcher:
            stitcher.drop()


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_no_resource_warning_at_exit(collection: str, script: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(WORKTREE), PYTHONWARNINGS="error::ResourceWarning")
    code = PREAMBLE + textwrap.dedent(SCRIPTS[script])
    done = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", "-c", code, collection],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "birds" in done.stdout  # it did search
    assert "ResourceWarning" not in done.stderr and "Con004" not in done.stderr, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
