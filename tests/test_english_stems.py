"""English lexical analysis on the BM25 side (issue 35 item 1), through the installed script on
the real server: a query word finds the other forms of it that a document uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stitcher import server
from tests.test_exit_codes import run_stitcher


@pytest.mark.integration
def test_a_stemmed_query_finds_another_form_of_the_word(
    weaviate_server: server.ServerInfo, tmp_path: Path
) -> None:
    docs = tmp_path / "stems"
    docs.mkdir()
    (docs / "guide.txt").write_text(
        "The installation of the firmware takes ten minutes. Reboot afterwards.\n",
        encoding="utf-8",
    )
    (docs / "other.txt").write_text(
        "Cooking rice needs water and patience. Salt it lightly.\n", encoding="utf-8"
    )
    ingested = run_stitcher("ingest", str(docs), "-c", "EnglishStems")
    assert ingested.returncode == 0, ingested.stderr
    # alpha 0: the keyword side alone. Without stems, `installing` shares no token with the
    # guide (installation) and nothing would come back.
    found = run_stitcher(
        "search", "installing", "-c", "EnglishStems", "--alpha", "0", "--json", "--limit", "1"
    )
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["results"]
    assert [Path(hit["path"]).name for hit in hits] == ["guide.txt"]
    assert "installation" in hits[0]["text"]
