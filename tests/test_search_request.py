"""One SearchRequest through every front end, and filters that say what they matched, on the real
server: the installed script (in-process and through the warm worker), the Python API and the
LangChain retriever give the same passages with the same alpha, for a Chinese and an English
query; `--where` cases run through the installed script."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stitcher import warm
from stitcher.api import Stitcher
from stitcher.langchain import StitchedRetriever
from stitcher.request import SearchRequest
from tests.test_exit_codes import REPO, assert_one_error_line, run_stitcher, script_environment

pytestmark = pytest.mark.integration

#: MiniLM reads English but not Chinese: the automatic alpha differs between the two, and from
#: the 0.5 the retriever used to pin.
QUERIES = ("how do birds navigate at night?", "豆腐怎么做")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("request") / "library"
    shutil.copytree(REPO / "samples" / "cities", root / "cities")
    for name in ("en_bird_migration.txt", "zh_homemade_tofu.md"):
        shutil.copy(REPO / "samples" / name, root / name)
    # The same tag in another spelling, so that case-folding has two spellings to find.
    (root / "harbour.md").write_text(
        "---\ntitle: Harbour\ntags: [City, port]\nlang: en\n---\n"
        "The harbour city grew around its docks. Ships still unload there every morning.\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture(scope="module")
def collection(weaviate_server: Any, corpus: Path) -> str:
    name = "Req" + uuid.uuid4().hex[:10]
    done = run_stitcher("ingest", str(corpus), "--collection", name)
    assert done.returncode == 0, done.stderr
    return name


def cli(collection: str, *args: str, env: dict[str, str] | None = None) -> Any:
    done = run_stitcher("search", *args, "--collection", collection, "--json", "--no-warm", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


#: Decimals a score is compared to. Two processes embed the same query a few 1e-6 apart (thread
#: counts, kernels), while another alpha moves a hybrid score by hundredths at least.
SCORE_DECIMALS = 3


def ranked(results: list[dict[str, Any]]) -> list[tuple[str, int, int, float]]:
    return [(r["doc_id"], r["start"], r["end"], round(r["score"], SCORE_DECIMALS)) for r in results]


# --- the same request through every front end -------------------------------------------------


@pytest.fixture
def warm_home(weaviate_server: Any) -> Iterator[dict[str, str]]:
    """The environment of a script whose searches go to a warm worker of its own."""
    home = Path(tempfile.mkdtemp(prefix="str-"))  # short: a unix socket path is ≤ 107 bytes
    try:
        yield script_environment(
            STITCHER_HOME=str(home),
            WEAVIATE_URL=weaviate_server.url,
            WEAVIATE_API_KEY=weaviate_server.api_key(),
            WEAVIATE_GRPC_PORT=str(weaviate_server.grpc_port),
            STITCHER_WARM="always",
            STITCHER_WARM_IDLE="120",
        )
    finally:
        warm.stop_worker(home)
        shutil.rmtree(home, ignore_errors=True)


def through_worker(collection: str, env: dict[str, str], query: str) -> dict[str, Any]:
    """`search --json --explain` answered by the warm worker (its count of searches says so)."""
    home = Path(env["STITCHER_HOME"])
    args = ("search", query, "--collection", collection, "--json", "--explain")
    if warm.status(home) is None:
        started = run_stitcher(*args, env=env)  # in-process; starts the worker after
        assert started.returncode == 0, started.stderr
        deadline = time.monotonic() + 120
        while warm.status(home) is None and time.monotonic() < deadline:
            time.sleep(0.2)
    before = int((warm.status(home) or {})["served"])
    done = run_stitcher(*args, env=env)
    assert done.returncode == 0, done.stderr
    assert int((warm.status(home) or {})["served"]) == before + 1, "the worker did not answer"
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.mark.parametrize("query", QUERIES)
def test_every_front_end_runs_the_same_request_with_the_same_alpha(
    collection: str, warm_home: dict[str, str], query: str
) -> None:
    script, _ = cli(collection, query, "--explain")
    assert script["results"], script
    alpha = script["alpha"]
    assert "alpha_reason" in script and "as requested" not in script["alpha_reason"]
    # Every passage's explanation names the alpha it was scored with.
    assert {r["explain"]["alpha"] for r in script["results"]} == {alpha}

    worker = through_worker(collection, warm_home, query)
    assert worker["alpha"] == alpha
    assert ranked(worker["results"]) == ranked(script["results"])

    with Stitcher(collection=collection) as s:
        result = s.run(SearchRequest(query=query, explain=True))
        assert result.alpha == alpha
        api = result.to_json(explain=True)
        assert ranked(api["results"]) == ranked(script["results"])

        documents = StitchedRetriever(stitcher=s).invoke(query)
        retrieved = [
            (d.metadata["doc_id"], d.metadata["start"], d.metadata["end"], d.metadata["score"])
            for d in documents
        ]
        # Same scores means the same alpha: they are alpha·vector + (1 − alpha)·keyword.
        assert [(i, a, b, round(score, SCORE_DECIMALS)) for i, a, b, score in retrieved] == ranked(
            script["results"]
        )


def test_the_automatic_alpha_differs_by_language_so_the_comparison_can_fail(
    collection: str,
) -> None:
    english, _ = cli(collection, QUERIES[0], "--explain")
    chinese, _ = cli(collection, QUERIES[1], "--explain")
    assert chinese["alpha"] < english["alpha"]
    pinned, _ = cli(collection, QUERIES[1], "--explain", "--alpha", "0.5")
    assert ranked(pinned["results"]) != ranked(chinese["results"])


# --- filters through the installed script -----------------------------------------------------


def doc_ids(out: dict[str, Any]) -> set[str]:
    return {r["doc_id"] for r in out["results"]}


def test_double_equals_filters_like_equals(collection: str) -> None:
    double, _ = cli(collection, "city", "--where", "lang==zh", "-k", "20")
    single, _ = cli(collection, "city", "--where", "lang=zh", "-k", "20")
    assert doc_ids(double) == doc_ids(single) != set()
    assert all(r["lang"] == "zh" for r in double["results"])


def test_source_is_the_folder_name_and_path_the_file_path(collection: str, corpus: Path) -> None:
    everything, _ = cli(collection, "--latest", "-k", "50")
    by_source, err = cli(collection, "--latest", "-k", "50", "--where", "source=library")
    assert doc_ids(by_source) == doc_ids(everything) and len(doc_ids(everything)) > 10
    assert err == ""
    one = str(corpus / "cities" / "porto.md")
    by_path, _ = cli(collection, "--latest", "--where", f"path={one}")
    assert doc_ids(by_path) == {"library/cities/porto.md"}
    by_part, _ = cli(collection, "--latest", "-k", "50", "--where", "path~/cities/")
    assert doc_ids(by_part) == {d for d in doc_ids(everything) if "/cities/" in d}
    none, _ = cli(collection, "--latest", "--where", "source!=library")
    assert none["results"] == []


def test_a_value_no_chunk_has_is_named_with_the_nearest_stored(collection: str) -> None:
    out, err = cli(collection, "city", "--where", "source=librar")
    assert out["results"] == []
    assert "source=librar: no chunk has it; stored values of source include library" in err
    out, err = cli(collection, "city", "--where", "tags=Citty")
    assert out["results"] == []
    assert "tags=Citty: no chunk has it; stored values of tags include city" in err


def test_tags_match_whatever_their_case(collection: str) -> None:
    upper, err = cli(collection, "harbour city", "--where", "tags=CITY", "-k", "20")
    lower, _ = cli(collection, "harbour city", "--where", "tags=city", "-k", "20")
    assert err == ""
    assert doc_ids(upper) == doc_ids(lower)
    assert "library/harbour.md" in doc_ids(upper)  # stored as "City"
    assert any("cities/" in d for d in doc_ids(upper))  # stored as "city"


def test_an_unknown_field_lists_what_stitcher_fields_lists(collection: str) -> None:
    done = run_stitcher("search", "x", "--collection", collection, "--where", "colour=red")
    assert done.returncode == 2
    line = assert_one_error_line(done.stderr)
    listed = line.rsplit("known fields: ", 1)[1].split(", ")
    fields = run_stitcher("fields", "--collection", collection, "--json")
    assert fields.returncode == 0, fields.stderr
    assert listed == [f["name"] for f in json.loads(fields.stdout)]
    assert "chunk_hash" not in listed and "source" in listed and "path" in listed


def test_latest_shows_the_date_it_sorted_by(collection: str) -> None:
    out, _ = cli(collection, "--latest", "-k", "3")
    assert out["sorted_by"] == "date"
    dates = [r["date"] for r in out["results"]]
    assert dates == sorted(dates, reverse=True) and all(dates)
    assert all("score" not in r for r in out["results"])
    panels = run_stitcher("search", "--latest", "-k", "3", "--collection", collection)
    assert panels.returncode == 0, panels.stderr
    assert "score 0.000" not in panels.stdout
    assert f"date {dates[0][:10]}" in panels.stdout
