"""Export and import: a collection moves with its vectors, resumably, and a damaged file
imports nothing.

The round trip runs on both stores through the library; the CLI tests run the installed script
against the session's server (exit codes, the interrupted import, a later ingest).
"""

from __future__ import annotations

import gzip
import json
import shutil
import signal
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus, SettingsMismatch
from stitcher.models import ChunkContext, ChunkRecord, CollectionSettings
from stitcher.transfer import (
    ExportFileInvalid,
    check_export,
    export_collection,
    export_target,
    import_collection,
)
from tests.test_exit_codes import assert_one_error_line, run_stitcher, script_environment

REPO = Path(__file__).resolve().parent.parent
DIMENSION = 8
SETTINGS = CollectionSettings(
    model="test/fixed-vectors", dimension=DIMENSION, chunk_size=250, chunk_overlap=50
)


def make_records(count: int) -> list[tuple[ChunkRecord, list[float]]]:
    """Chunks with every kind of metadata the schema knows, and distinct float32-exact vectors."""
    made = []
    for index in range(count):
        doc = f"notes/doc{index % 7}.md"
        metadata: dict[str, Any] = {
            "title": f"文档 {index % 7}",
            "date": datetime(2021, 3, 1 + index % 20, 8, 30, tzinfo=timezone.utc),
            "tags": ["a", f"t{index % 3}"],
            "lang": "zh" if index % 2 else "en",
            "page": index % 5,
            "rating": index / 4,
            "reviewed": index % 2 == 0,
            "deadline": datetime(2022, 1, 1 + index % 9, tzinfo=timezone.utc),
            "作者": "张三",
        }
        record = ChunkRecord(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"chunk-{index}")),
            doc_id=doc,
            doc_hash=f"hash{index % 7}",
            chunk_index=index // 7,
            start=(index // 7) * 200,
            end=(index // 7) * 200 + 250,
            text=f"第 {index} 段。Sentence number {index} ends here.",
            source="notes",
            chunk_hash=f"c{index}",
            doc_length=5000,
            parent_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"chunk-{index - 7}"))
            if index >= 7
            else None,
            metadata=metadata,
            starts_sentence=index % 3 == 0,
            ends_sentence=None if index % 4 == 0 else True,
            context=ChunkContext("before ", " after", ((index, 0, 250),)),
            rules="loader2.sentences3",
        )
        vector = [((index * 7 + d) % 13) / 8.0 - 0.75 for d in range(DIMENSION)]  # exact in f32
        made.append((record, vector))
    return made


@pytest.fixture(params=["memory", pytest.param("weaviate", marks=pytest.mark.integration)])
def store_pair(request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any]]:
    """A source and a target store of the same kind, fresh names, removed after."""
    names = ["Src" + uuid.uuid4().hex[:10], "Dst" + uuid.uuid4().hex[:10]]
    if request.param == "memory":
        from stitcher.store.memory import MemoryStore

        yield MemoryStore(names[0]), MemoryStore(names[1])
        return
    from stitcher.store.weaviate import WeaviateStore

    client = request.getfixturevalue("weaviate_client")
    stores = [WeaviateStore(client, name) for name in names]
    yield stores[0], stores[1]
    for store in stores:
        store.forget_sources()
        client.collections.delete(store.name)


def snapshot(store: Any) -> dict[str, tuple[ChunkRecord, list[float]]]:
    return {record.id: (record, vector) for record, vector in store.records_with_vectors(7)}


def filled(store: Any, count: int = 45) -> Any:
    store.create(SETTINGS)
    records = make_records(count)
    assert store.write([r for r, _ in records], [v for _, v in records]) == []
    store.register_source("notes", "/data/notes")
    return store


def export_file(store: Any, path: Path) -> Path:
    with export_target(str(path), stdout=None) as out:  # type: ignore[arg-type]
        export_collection(store, SETTINGS, out, path=str(path))
    return path


def test_round_trip_keeps_objects_properties_vectors_and_sources(
    store_pair: tuple[Any, Any], tmp_path: Path
) -> None:
    source, target = store_pair
    filled(source)
    path = export_file(source, tmp_path / "export.jsonl.gz")
    assert path.read_bytes()[:2] == b"\x1f\x8b"  # gzip by name
    assert not (tmp_path / "export.jsonl.gz.partial").exists()

    report = import_collection(target, str(path))
    assert (report.count, report.written, report.skipped, report.created) == (45, 45, 0, True)
    assert snapshot(target) == snapshot(source)
    assert snapshot(target).keys() == {r.id for r, _ in make_records(45)}
    assert target.settings() == SETTINGS
    assert target.source_roots() == {"notes": "/data/notes"}
    assert target.fields() == source.fields()

    again = import_collection(target, str(path))  # nothing left to do, still verified
    assert (again.written, again.skipped, again.created) == (0, 45, False)


def test_header_and_trailer(tmp_path: Path) -> None:
    from stitcher.store.memory import MemoryStore

    path = export_file(filled(MemoryStore("Head"), 10), tmp_path / "e.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    header, trailer = json.loads(lines[0]), json.loads(lines[-1])
    assert header["settings"]["model"] == "test/fixed-vectors"
    assert header["count"] == 10 and len(lines) == 12
    assert header["rules"] and header["sources"] == {"notes": "/data/notes"}
    assert trailer["end"] is True and trailer["count"] == 10
    assert check_export(str(path))[1] == trailer["sha256"]
    ids = [json.loads(line)["id"] for line in lines[1:-1]]
    assert ids == sorted(ids)


def damaged(path: Path, how: str) -> Path:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if how == "not json":
        lines[5] = lines[5][: len(lines[5]) // 2] + "\n"
    elif how == "changed text":
        item = json.loads(lines[5])
        item["properties"]["text"] += " (edited)"
        lines[5] = json.dumps(item) + "\n"
    elif how == "cut off":
        lines = lines[:-3]
    elif how == "short vector":
        item = json.loads(lines[3])
        item["vector"] = item["vector"][:-1]
        lines[3] = json.dumps(item) + "\n"
    elif how == "missing property":
        item = json.loads(lines[4])
        del item["properties"]["doc_id"]
        lines[4] = json.dumps(item) + "\n"
    out = path.with_name(f"{how.replace(' ', '-')}.jsonl")
    out.write_text("".join(lines), encoding="utf-8")
    return out


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("not json", "line 6: not JSON"),
        ("changed text", "the file was changed or damaged"),
        ("cut off", "no end line after"),
        ("short vector", "line 4: vector of length 7"),
        ("missing property", "line 5: not a stitcher object"),
    ],
)
def test_damaged_file_imports_nothing(
    store_pair: tuple[Any, Any], tmp_path: Path, how: str, expected: str
) -> None:
    source, target = store_pair
    path = damaged(export_file(filled(source, 20), tmp_path / "e.jsonl"), how)
    with pytest.raises(ExportFileInvalid, match=expected) as caught:
        import_collection(target, str(path))
    assert "nothing was imported" in str(caught.value)
    assert not target.exists()


def test_existing_collection_with_other_settings_is_refused(
    store_pair: tuple[Any, Any], tmp_path: Path
) -> None:
    source, target = store_pair
    path = export_file(filled(source, 5), tmp_path / "e.jsonl")
    target.create(CollectionSettings("other/model", DIMENSION, 250, 50))
    with pytest.raises(SettingsMismatch, match="model: 'other/model'"):
        import_collection(target, str(path))
    assert target.count() == 0


# --- through the installed script ------------------------------------------------------------


@pytest.fixture
def server_collection(weaviate_client: Any) -> Iterator[str]:
    """A collection of 450 objects with fixed vectors on the session's server."""
    from stitcher.store.weaviate import WeaviateStore

    store = WeaviateStore(weaviate_client, "Cli" + uuid.uuid4().hex[:10])
    filled(store, 450)
    yield store.name
    store.forget_sources()
    weaviate_client.collections.delete(store.name)


@pytest.fixture
def cleanup(weaviate_client: Any) -> Iterator[list[str]]:
    """Names of collections a test creates through the CLI; dropped after it."""
    from stitcher.store.weaviate import WeaviateStore

    names: list[str] = []
    yield names
    for name in names:
        WeaviateStore(weaviate_client, name).forget_sources()
        weaviate_client.collections.delete(name)


def test_cli_export_import_and_interrupted_import(
    server_collection: str, weaviate_client: Any, tmp_path: Path, cleanup: list[str]
) -> None:
    from stitcher.store.weaviate import WeaviateStore

    path = tmp_path / "moved.jsonl"
    done = run_stitcher("export", "-c", server_collection, str(path))
    assert done.returncode == 0, done.stderr
    assert f"exported 450 objects of {server_collection}" in done.stderr
    assert done.stdout == ""

    stdout = run_stitcher("export", "-c", server_collection, "-")
    assert stdout.returncode == 0 and stdout.stdout == path.read_text(encoding="utf-8")

    target = "Moved" + uuid.uuid4().hex[:8]
    cleanup.append(target)
    killed = run_stitcher(
        "import", str(path), "-c", target, env=script_environment(STITCHER_FAULT_POINT="import:2")
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    landed = WeaviateStore(weaviate_client, target).count()
    assert 0 < landed < 450  # the first batch was written, the rest was not

    rerun = run_stitcher("import", str(path), "-c", target, "--json")
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert (report["skipped"], report["written"]) == (landed, 450 - landed)
    assert snapshot(WeaviateStore(weaviate_client, target)) == snapshot(
        WeaviateStore(weaviate_client, server_collection)
    )

    clashing = "Clash" + target
    WeaviateStore(weaviate_client, clashing).create(
        CollectionSettings("other/model", DIMENSION, 250, 50)
    )
    cleanup.append(clashing)
    clash = run_stitcher("import", str(path), "-c", clashing)
    assert clash.returncode == ExitStatus.FAILED
    assert "exists with other settings" in assert_one_error_line(clash.stderr)


def test_cli_damaged_file_is_one_clear_error(
    server_collection: str, weaviate_client: Any, tmp_path: Path
) -> None:
    path = tmp_path / "e.jsonl"
    assert run_stitcher("export", "-c", server_collection, str(path)).returncode == 0
    bad = damaged(path, "not json")
    target = "Never" + uuid.uuid4().hex[:8]
    done = run_stitcher("import", str(bad), "-c", target)
    assert done.returncode == ExitStatus.FAILED
    line = assert_one_error_line(done.stderr)
    assert "line 6: not JSON" in line and "nothing was imported" in line
    assert not weaviate_client.collections.exists(target)


def test_moved_collection_searches_and_ingests_like_the_original(
    weaviate_server: Any, weaviate_client: Any, tmp_path: Path, cleanup: list[str]
) -> None:
    """With the real model: the imported collection answers the same search, and an ingest
    of the same folder into it finds nothing to do (sources and versions came along)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("en_bird_migration.txt", "zh_homemade_tofu.md"):
        shutil.copy(REPO / "samples" / name, folder / name)
    original, moved = "Orig" + uuid.uuid4().hex[:8], "Copy" + uuid.uuid4().hex[:8]
    cleanup.extend([original, moved])
    assert run_stitcher("ingest", str(folder), "-c", original).returncode == 0
    path = tmp_path / "orig.jsonl.gz"
    assert run_stitcher("export", "-c", original, str(path)).returncode == 0
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        assert json.loads(handle.readline())["settings"]["model"].endswith("all-MiniLM-L6-v2")
    assert run_stitcher("import", str(path), "-c", moved).returncode == 0

    searches = [
        run_stitcher("search", "where do birds rest", "-c", name, "--json")
        for name in (original, moved)
    ]
    assert all(s.returncode == 0 for s in searches), [s.stderr for s in searches]
    passages = [
        [(p["doc_id"], p["text"]) for p in json.loads(s.stdout)["results"]] for s in searches
    ]
    assert passages[0] and passages[0] == passages[1]

    again = run_stitcher("ingest", str(folder), "-c", moved, "--json")
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["added"], summary["updated"], summary["embedded"]) == (0, 0, 0)
    assert summary["unchanged"] == 2
