"""A Debian documentation folder through the installed script and a real server: compressed
files, "README.Debian", extensionless prose and an mbox are loaded under their real names and
their chunks exported; scripts and archives are named as skipped; a damaged archive is
unreadable (exit 3). Unit tests of the same: tests/test_debian_docs.py."""

from __future__ import annotations

import gzip
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus
from tests.test_debian_docs import CHANGELOG, debian_doc_folder
from tests.test_exit_codes import assert_one_error_line, run_stitcher

pytestmark = pytest.mark.integration

SKIPPED = (
    "3 skipped: 2 without extension (not prose by its name or content), "
    "1 .tar.gz (not a supported type)"
)


def _collection() -> str:
    return f"Debdoc{uuid.uuid4().hex[:8]}"


def exported_chunks(name: str) -> dict[str, list[dict[str, Any]]]:
    """The chunks of collection `name` as `stitcher export` writes them, by document, in order."""
    done = run_stitcher("export", "-c", name, "-")
    assert done.returncode == ExitStatus.OK, done.stderr
    chunks: dict[str, list[dict[str, Any]]] = {}
    for line in done.stdout.splitlines():
        properties = json.loads(line).get("properties")
        if properties is not None:
            chunks.setdefault(properties["doc_id"], []).append(properties)
    for parts in chunks.values():
        parts.sort(key=lambda part: part["chunk_index"])
    return chunks


def test_a_debian_doc_folder_is_loaded_and_its_chunks_exported(
    weaviate_server: Any, tmp_path: Path
) -> None:
    root = debian_doc_folder(tmp_path / "tidewater")
    name = _collection()
    done = run_stitcher("ingest", str(root), "-c", name)
    assert done.returncode == ExitStatus.OK, done.stderr
    assert "7 added" in done.stdout and SKIPPED in done.stdout, done.stdout
    assert "unreadable" not in done.stdout and "error" not in done.stderr

    chunks = exported_chunks(name)
    assert sorted(chunks) == [
        "tidewater/FEATURES.xz",
        "tidewater/README.Debian",
        "tidewater/changelog.Debian.gz",
        "tidewater/copyright",
        "tidewater/discussion",
        "tidewater/manual.md.bz2",
        "tidewater/tidewater.1.gz",
    ]
    for parts in chunks.values():
        assert all(part["text"].strip() for part in parts)
        assert parts[0]["source"].startswith(str(root) + "/")
    changelog = "".join(part["text"] for part in chunks["tidewater/changelog.Debian.gz"])
    assert "Apply upstream patches 16 to 21." in changelog
    assert chunks["tidewater/changelog.Debian.gz"][0]["metadata"]["line"] == 1
    page = "".join(part["text"] for part in chunks["tidewater/tidewater.1.gz"])
    assert "Heights are given above chart datum" in page and ".TH" not in page
    assert chunks["tidewater/discussion"][0]["metadata"]["title"] == "The new tide tables"

    listed = run_stitcher("ingest", str(root), "-c", name, "--json")
    report = json.loads(listed.stdout)
    assert (report["unchanged"], report["skipped"]) == (7, 3)
    assert {item["file"].removeprefix(f"{root}/") for item in report["skipped_files"]} == {
        "examples/Makefile",
        "examples/postinst",
        "examples/tables.tar.gz",
    }


def test_a_damaged_archive_is_named_unreadable(weaviate_server: Any, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "README.Debian").write_text("Read the changelog first.\n", encoding="utf-8")
    whole = gzip.compress(CHANGELOG.encode())
    (root / "changelog.Debian.gz").write_bytes(whole[: len(whole) // 2])
    done = run_stitcher("ingest", str(root), "-c", _collection())
    assert done.returncode == ExitStatus.UNREADABLE == 3, done.stderr
    assert "1 added" in done.stdout and "1 unreadable" in done.stdout
    line = assert_one_error_line(done.stderr)
    assert f"{root}/changelog.Debian.gz: not a readable gzip file" in line
