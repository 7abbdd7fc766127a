"""What `server status` and `stats` show, JSON on stdout, and the warm worker's process name."""

from __future__ import annotations

import io
import json
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from rich.console import Console

from stitcher import render, warm
from stitcher.cli.output import print_json
from stitcher.server.reports import ServerStatus, collections_on_disk
from tests.test_exit_codes import REPO, run_stitcher, script_environment


def _rendered(draw: Any) -> str:
    console = Console(file=io.StringIO(), width=200, markup=False, highlight=False)
    draw(console)
    return console.file.getvalue()  # type: ignore[attr-defined]


# --- server status ------------------------------------------------------------------------------


def test_a_stopped_server_shows_its_collections_from_disk_and_never_none(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for folder in ("mydocs", "notes", "raft", "stitcherlease", "stitchersources"):
        (data / folder).mkdir(parents=True)
    (data / "schema.db").write_bytes(b"")
    status = ServerStatus(state="stopped", home=tmp_path, log_file=tmp_path / "weaviate.log")

    data_json = {**status.to_json(), "warm_worker": {"running": False}}
    shown = _rendered(lambda c: render.server_status(c, data_json))

    assert data_json["collections_on_disk"] == ["mydocs", "notes"]
    assert "2 on disk: mydocs, notes" in shown
    assert "None" not in shown
    assert "leader" not in shown and "pid " not in shown  # unknown: left out, not "None"


def test_a_home_without_data_has_no_collections_on_disk(tmp_path: Path) -> None:
    assert collections_on_disk(tmp_path / "data") == ()
    status = ServerStatus(state="stopped", home=tmp_path, log_file=tmp_path / "weaviate.log")
    shown = _rendered(lambda c: render.server_status(c, status.to_json()))
    assert "none on disk" in shown


@pytest.mark.integration
def test_a_collection_has_a_folder_on_disk_until_it_is_dropped(
    weaviate_server: Any, tmp_path: Path
) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    shutil.copy(REPO / "samples" / "en_bird_migration.txt", corpus)
    name = "Disk" + uuid.uuid4().hex[:8]
    data_dir = weaviate_server.data_path
    assert run_stitcher("ingest", str(corpus), "-c", name).returncode == 0

    assert name.lower() in collections_on_disk(data_dir)
    live = {
        c["name"].lower()
        for c in json.loads(run_stitcher("server", "status", "--json").stdout)["collections"]
    }
    assert set(collections_on_disk(data_dir)) <= live  # no folder that is not a collection

    assert run_stitcher("drop", "-c", name, "--yes").returncode == 0
    assert name.lower() not in collections_on_disk(data_dir)


# --- stats --------------------------------------------------------------------------------------

STATS = {
    "collection": "Docs",
    "documents": 3,
    "chunks": 7,
    "replication_factor": 1,
    "shards": {"Xq9shard": ["node0"]},
    "by_source": {"资料": {"documents": 2, "chunks": 5}, "notes": {"documents": 1, "chunks": 2}},
    "sources": {"/data/资料/a.md": 3, "/data/资料/b.md": 2, "/data/notes/c.txt": 2},
}


def test_stats_show_documents_per_source_not_per_document() -> None:
    shown = _rendered(lambda c: render.stats_table(c, STATS))
    assert "资料" in shown and "notes" in shown
    assert "a.md" not in shown  # per-document rows only under --documents
    assert "Xq9shard" not in shown  # shards only under --verbose


def test_stats_documents_and_shards_on_request() -> None:
    shown = _rendered(lambda c: render.stats_table(c, STATS, documents=True, shards=True))
    assert "/data/资料/a.md" in shown and "/data/notes/c.txt" in shown
    assert "Xq9shard" in shown and "node0" in shown


@pytest.mark.integration
def test_stats_through_the_script(weaviate_server: Any, tmp_path: Path) -> None:
    corpus = tmp_path / "资料"
    corpus.mkdir()
    for sample in ("en_bird_migration.txt", "zh_homemade_tofu.md"):
        shutil.copy(REPO / "samples" / sample, corpus)
    name = "Stats" + uuid.uuid4().hex[:8]
    assert run_stitcher("ingest", str(corpus), "-c", name).returncode == 0
    try:
        plain = run_stitcher("stats", "-c", name)
        assert plain.returncode == 0, plain.stderr
        assert "资料" in plain.stdout and "zh_homemade_tofu" not in plain.stdout
        # Wide enough that no path folds (a name is data: at 80 columns it wraps, never cut).
        wide = script_environment(COLUMNS="400")
        listed = run_stitcher("stats", "-c", name, "--documents", env=wide)
        assert "zh_homemade_tofu" in listed.stdout
        # --json before the command, Chinese as itself even where Python would pick ASCII
        raw = run_stitcher(
            "--json", "stats", "-c", name, env=script_environment(PYTHONIOENCODING="ascii")
        )
        assert raw.returncode == 0, raw.stderr
        assert "资料" in raw.stdout and "\\u" not in raw.stdout
        assert json.loads(raw.stdout)["by_source"]["资料"]["documents"] == 2
    finally:
        run_stitcher("drop", "-c", name, "--yes")


# --- JSON on stdout -----------------------------------------------------------------------------


def test_print_json_writes_utf8_whatever_the_stream_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii"))
    print_json({"title": "豆腐"})
    assert raw.getvalue().decode("utf-8") == '{"title": "豆腐"}\n'


# --- the warm worker names itself ---------------------------------------------------------------


@pytest.fixture
def warm_home() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="stw-"))  # short: unix socket paths are limited
    try:
        yield folder
    finally:
        warm.stop_worker(folder)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.integration
def test_the_warm_worker_is_called_stitcher_warm_and_status_shows_it(
    weaviate_server: Any, warm_home: Path, tmp_path: Path
) -> None:
    from tests.test_warm import environment, wait_for_worker, wait_until_gone

    corpus = tmp_path / "docs"
    corpus.mkdir()
    shutil.copy(REPO / "samples" / "en_bird_migration.txt", corpus)
    name = "Named" + uuid.uuid4().hex[:8]
    env = environment(warm_home, weaviate_server)
    assert run_stitcher("ingest", str(corpus), "-c", name, env=env).returncode == 0
    try:
        assert run_stitcher("search", "birds", "-c", name, "--json", env=env).returncode == 0
        pid = wait_for_worker(warm_home)["pid"]

        process = psutil.Process(pid)
        assert any(part.endswith(warm.PROCESS_NAME) for part in process.cmdline())
        assert process.name() == warm.PROCESS_NAME  # what ps -e, top and pgrep show

        shown = run_stitcher("server", "status", env=env)
        assert shown.returncode == 0, shown.stderr
        words = " ".join(shown.stdout.split())  # the table wraps a long row
        assert f"warm_worker running as stitcher-warm, pid {pid}: idle" in words
        assert "(stop it: stitcher server stop)" in words
        assert "None" not in shown.stdout

        assert run_stitcher("server", "stop", env=env).returncode == 0
        assert wait_until_gone(pid)  # the way out status names does stop it
    finally:
        run_stitcher("drop", "-c", name, "--yes", env=env)
