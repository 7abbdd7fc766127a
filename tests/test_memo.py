"""The load memo: an unchanged file is not loaded again, and no memo can hide a change.

Scenarios run on both stores (the memo only needs what `store.documents()` says); loading is
counted by wrapping `stitcher.loaders.load`, which ingest looks up on every run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import stitcher.loaders
from stitcher import rules
from stitcher.ingest import IngestOptions, ingest
from stitcher.memo import LoadMemo, Remembered, file_fingerprint, load_options_key
from tests.fakes import FakeEmbedder
from tests.stores import both_stores

EN = (
    "The railway reached the valley in 1887, and within a decade the town had doubled in size. "
    "Freight trains carried timber and wool to the coast, while passenger services brought "
    "visitors who had never seen the mountains before. The station master kept a diary. "
)
ZH = "茶树喜欢温暖湿润的气候，也需要排水良好的酸性土壤。每年春天，农人会在清明前后采摘第一批嫩芽。"

store = both_stores("Memo")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "zh").mkdir(parents=True)
    (root / "zh" / "tea.txt").write_text(ZH * 4, encoding="utf-8")
    (root / "rail.txt").write_text(EN * 3, encoding="utf-8")
    (root / "note.md").write_text("# Note\n\nOne short line of prose here.\n", encoding="utf-8")
    return root


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Doc ids of every file ingest loads."""
    seen: list[str] = []
    real = stitcher.loaders.load

    def counting(src: Any, **kwargs: Any) -> Any:
        seen.append(src.doc_id)
        return real(src, **kwargs)

    monkeypatch.setattr(stitcher.loaders, "load", counting)
    return seen


def run(store: Any, root: Path, memo: LoadMemo | None, **opts: Any) -> Any:
    embedder = FakeEmbedder()
    return ingest(
        store,
        [str(root)],
        model_name=embedder.name,
        embedder=lambda: embedder,
        options=IngestOptions(**opts),
        memo=memo,
    )


def memo_at(tmp_path: Path) -> LoadMemo:
    return LoadMemo(tmp_path / "memo" / "m.sqlite")


def test_an_unchanged_file_is_not_loaded_again(
    store: Any, corpus: Path, tmp_path: Path, loads: list[str]
) -> None:
    first = run(store, corpus, memo_at(tmp_path))
    assert len(first.added) == 3 and len(loads) == 3
    loads.clear()
    second = run(store, corpus, memo_at(tmp_path))
    assert loads == []
    assert sorted(second.unchanged) == sorted(first.added)
    assert second.chunks_written == 0 and second.embedded == 0


def test_an_edited_file_is_loaded_and_replaced_the_others_are_not(
    store: Any, corpus: Path, tmp_path: Path, loads: list[str]
) -> None:
    run(store, corpus, memo_at(tmp_path))
    (corpus / "rail.txt").write_text(EN * 3 + "A new sentence closes the text.", "utf-8")
    loads.clear()
    summary = run(store, corpus, memo_at(tmp_path))
    assert loads == ["docs/rail.txt"]
    assert summary.updated == ["docs/rail.txt"] and len(summary.unchanged) == 2
    loads.clear()
    assert len(run(store, corpus, memo_at(tmp_path)).unchanged) == 3 and loads == []


def test_a_changed_sidecar_or_option_makes_the_file_load_again(
    store: Any, corpus: Path, tmp_path: Path, loads: list[str]
) -> None:
    run(store, corpus, memo_at(tmp_path))
    (corpus / "note.md.meta.json").write_text(json.dumps({"tags": ["late"]}), "utf-8")
    loads.clear()
    summary = run(store, corpus, memo_at(tmp_path))
    assert loads == ["docs/note.md"] and summary.updated == ["docs/note.md"]
    loads.clear()
    summary = run(store, corpus, memo_at(tmp_path), tags=("extra",))
    assert sorted(loads) == sorted(summary.updated) and len(summary.updated) == 3


def test_a_memo_never_hides_what_the_collection_lacks(
    store: Any, corpus: Path, tmp_path: Path, loads: list[str]
) -> None:
    run(store, corpus, memo_at(tmp_path))
    for doc_id in list(store.documents()):
        store.delete_document(doc_id)
    loads.clear()
    summary = run(store, corpus, memo_at(tmp_path))
    assert len(summary.added) == 3 and len(loads) == 3
    assert store.count() == summary.chunks_written > 0


def test_a_wrong_memo_costs_a_load_not_a_skipped_change(
    store: Any, corpus: Path, tmp_path: Path, loads: list[str]
) -> None:
    run(store, corpus, memo_at(tmp_path))
    path = tmp_path / "memo" / "m.sqlite"
    with sqlite3.connect(path) as db:  # as if another collection's memo had been copied here
        db.execute("UPDATE memo SET doc_hash = 'feed' WHERE doc_id = 'docs/rail.txt'")
    db.close()
    loads.clear()
    summary = run(store, corpus, memo_at(tmp_path))
    assert loads == ["docs/rail.txt"] and len(summary.unchanged) == 3
    loads.clear()
    run(store, corpus, memo_at(tmp_path))
    assert loads == []  # the load confirmed the stored version and repaired the memo


def test_new_text_rules_load_every_file_again(
    store: Any, corpus: Path, tmp_path: Path, loads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(store, corpus, memo_at(tmp_path))
    monkeypatch.setattr(rules, "TEXT_RULES_VERSION", rules.TEXT_RULES_VERSION + ".next")
    loads.clear()
    summary = run(store, corpus, memo_at(tmp_path))
    assert len(loads) == 3 and len(summary.rebuilt) == 3


def test_a_dry_run_and_a_pruned_document_leave_the_memo_right(
    store: Any, corpus: Path, tmp_path: Path, loads: list[str]
) -> None:
    run(store, corpus, memo_at(tmp_path), dry_run=True)
    assert not (tmp_path / "memo" / "m.sqlite").exists()
    run(store, corpus, memo_at(tmp_path))
    (corpus / "note.md").unlink()
    summary = run(store, corpus, memo_at(tmp_path), prune=True)
    assert summary.deleted == ["docs/note.md"]
    assert memo_at(tmp_path).recall("docs/note.md") is None
    assert memo_at(tmp_path).recall("docs/rail.txt") is not None


def test_a_file_edited_while_it_is_read_is_not_remembered(
    store: Any, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = stitcher.loaders.load
    target = corpus / "rail.txt"

    def load_then_edit(src: Any, **kwargs: Any) -> Any:
        doc = real(src, **kwargs)
        if src.path == target:
            target.write_text(EN + "Edited during the run.", "utf-8")
        return doc

    monkeypatch.setattr(stitcher.loaders, "load", load_then_edit)
    run(store, corpus, memo_at(tmp_path))
    assert memo_at(tmp_path).recall("docs/rail.txt") is None
    assert memo_at(tmp_path).recall("docs/note.md") is not None
    monkeypatch.setattr(stitcher.loaders, "load", real)
    summary = run(store, corpus, memo_at(tmp_path))
    assert summary.updated == ["docs/rail.txt"]


def test_an_unreadable_memo_only_turns_itself_off(
    store: Any, corpus: Path, tmp_path: Path, loads: list[str]
) -> None:
    path = tmp_path / "memo" / "m.sqlite"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    notices: list[str] = []
    summary = run(store, corpus, LoadMemo(path, notice=notices.append))
    assert len(summary.added) == 3 and summary.exit_status == 0
    summary = run(store, corpus, LoadMemo(path, notice=notices.append))
    assert len(summary.unchanged) == 3 and len(loads) == 6
    assert notices and "memo" in notices[0]


def test_the_fingerprint_covers_bytes_sidecar_source_and_options(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"one")
    sidecar = tmp_path / "a.txt.meta.json"
    key = load_options_key((), False, 250, 50)
    base = file_fingerprint(path, "a.txt", sidecar, key)
    assert file_fingerprint(path, "a.txt", sidecar, key) == base
    assert file_fingerprint(path, "./a.txt", sidecar, key) != base
    assert (
        file_fingerprint(path, "a.txt", sidecar, load_options_key(("t",), False, 250, 50)) != base
    )
    sidecar.write_text("{}")
    assert file_fingerprint(path, "a.txt", sidecar, key) != base
    sidecar.unlink()
    path.write_bytes(b"two")
    assert file_fingerprint(path, "a.txt", sidecar, key) != base


def test_remember_save_recall_forget(tmp_path: Path) -> None:
    memo = memo_at(tmp_path)
    memo.remember("a", Remembered("f", "h", 3))
    memo.save()
    again = memo_at(tmp_path)
    assert again.recall("a") == Remembered("f", "h", 3)
    again.forget(["a"])
    again.save()
    assert memo_at(tmp_path).recall("a") is None


@pytest.mark.integration
def test_the_cli_keeps_a_memo_per_collection_and_reread_bypasses_it(
    weaviate_server: Any, tmp_path: Path
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "rail.txt").write_text(EN * 3, "utf-8")
    home = tmp_path / "home"
    env = {
        **os.environ,
        "STITCHER_HOME": str(home),
        "WEAVIATE_API_KEY": weaviate_server.api_key(),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    exe = Path(sys.executable).parent / "stitcher"
    command = [
        str(exe),
        "ingest",
        str(root),
        "--json",
        "--collection",
        "MemoCli" + os.urandom(4).hex(),
        "--url",
        weaviate_server.url,
        "--grpc-port",
        str(weaviate_server.grpc_port),
    ]
    try:
        runs = [
            subprocess.run(command + extra, env=env, capture_output=True, text=True, timeout=600)
            for extra in ([], [], ["--reread"])
        ]
        for result in runs:
            assert result.returncode == 0, result.stderr
        outcomes = [json.loads(r.stdout) for r in runs]
        assert outcomes[0]["added"] == 1
        assert outcomes[1]["unchanged"] == outcomes[2]["unchanged"] == 1
        memos = list((home / "memo").glob("*.sqlite"))
        assert len(memos) == 1
        with sqlite3.connect(memos[0]) as db:
            assert db.execute("SELECT doc_id FROM memo").fetchall() == [("docs/rail.txt",)]
        db.close()
        dropped = subprocess.run(
            [*command[:1], "drop", "--yes", *command[4:]], env=env, capture_output=True
        )
        assert dropped.returncode == 0, dropped.stderr
        assert not memos[0].exists()  # the memo goes with the collection
    finally:
        subprocess.run([*command[:1], "drop", "--yes", *command[4:]], env=env, capture_output=True)
