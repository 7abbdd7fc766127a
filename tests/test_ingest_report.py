"""What `stitcher ingest` says about what it read, through the installed script and a real server:
skipped files named by reason, folders of nothing loadable and too-deep folders as one `error:`
line each (exit 3), file names with control characters escaped, empty PDFs and stray bytes
loaded with a notice (exit 0). Unit tests of the same: tests/test_discovery_report.py."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus
from tests.test_discovery_report import (
    CHINESE,
    FRENCH,
    deep_folder,
    mixed_folder,
    pdf_without_pages,
    remove_deep_folder,
)
from tests.test_exit_codes import assert_one_error_line, run_stitcher

pytestmark = pytest.mark.integration

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _collection() -> str:
    return f"Report{uuid.uuid4().hex[:8]}"


def test_a_mixed_folder_names_every_file(weaviate_server: Any, tmp_path: Path) -> None:
    root = mixed_folder(tmp_path / "letters")
    name = _collection()
    skipped = (
        "4 skipped: 1 .csv, 1 .xlsx (not a supported type), 1 without extension (binary), "
        "1 without extension (not prose by its name or content)"
    )

    dry = run_stitcher("ingest", str(root), "-c", name, "--dry-run")
    assert dry.returncode == ExitStatus.OK, dry.stderr
    lines = dry.stdout.splitlines()
    assert "3 added" in lines[0] and skipped in lines[0]
    assert sorted(line for line in lines[1:] if "would add" in line) == [
        "  would add: letters/README",
        "  would add: letters/a.txt",
        "  would add: letters/b.md",
    ]
    assert sorted(line for line in lines[1:] if "would skip" in line) == [
        f"  would skip: {root}/Makefile (without extension: not prose by its name or content)",
        f"  would skip: {root}/blob (without extension: binary)",
        f"  would skip: {root}/c.xlsx (.xlsx: not a supported type)",
        f"  would skip: {root}/sub/d.csv (.csv: not a supported type)",
    ]
    assert len(lines) == 8
    # One notice line on stderr, for whoever reads --json on stdout.
    assert dry.stderr.splitlines() == [skipped.replace("skipped:", "skipped (not loaded):")]

    done = run_stitcher("ingest", str(root), "-c", name)
    assert done.returncode == ExitStatus.OK, done.stderr
    assert done.stdout.count("\n") == 1
    assert "3 added" in done.stdout and skipped in done.stdout

    again = run_stitcher("ingest", str(root), "-c", name, "--json")
    assert again.returncode == ExitStatus.OK, again.stderr
    report = json.loads(again.stdout)
    assert (report["unchanged"], report["skipped"]) == (3, 4)
    assert sorted(report["skipped_files"], key=lambda item: item["file"]) == [
        {
            "file": f"{root}/Makefile",
            "type": "without extension",
            "reason": "not prose by its name or content",
        },
        {"file": f"{root}/blob", "type": "without extension", "reason": "binary"},
        {"file": f"{root}/c.xlsx", "type": ".xlsx", "reason": "not a supported type"},
        {"file": f"{root}/sub/d.csv", "type": ".csv", "reason": "not a supported type"},
    ]


def test_a_folder_of_only_unsupported_files_is_3(weaviate_server: Any, tmp_path: Path) -> None:
    root = tmp_path / "manuals"
    root.mkdir()
    for file_name in ("intro.xlsx", "usage.xlsx", "plan.csv"):
        (root / file_name).write_text("Some text.\n", encoding="utf-8")
    done = run_stitcher("-q", "ingest", str(root), "-c", _collection())
    assert done.returncode == ExitStatus.UNREADABLE == 3, done.stderr
    error = assert_one_error_line(done.stderr)
    assert error.startswith(f"error: {root}: none of its files can be loaded: 2 .xlsx, 1 .csv")
    assert "0 added" in done.stdout


def test_a_too_deep_folder_is_one_error_and_the_rest_is_loaded(
    weaviate_server: Any, tmp_path: Path
) -> None:
    root = deep_folder(tmp_path / "deep", 1200)
    try:
        (root / "top.txt").write_text("The top of a very deep folder.", encoding="utf-8")
        done = run_stitcher("ingest", str(root), "-c", _collection())
        assert done.returncode == ExitStatus.UNREADABLE, done.stderr
        assert "folder nested more than" in assert_one_error_line(done.stderr)
        assert "1 added" in done.stdout and "1 unreadable" in done.stdout
        assert "RecursionError" not in done.stderr
    finally:
        remove_deep_folder(root)


def test_control_characters_in_file_names_are_escaped(weaviate_server: Any, tmp_path: Path) -> None:
    root = tmp_path / "names"
    root.mkdir()
    forged = "ok\nerror: forged line.txt"
    broken = "red\x1b[31m.pdf"
    (root / forged).write_text("A file with a newline in its name.", encoding="utf-8")
    (root / broken).write_bytes(b"%PDF-1.4 not really")
    (root / "tab\there.xlsx").write_text("Unsupported, with a tab.", encoding="utf-8")

    for args in ((), ("--dry-run",)):
        done = run_stitcher("ingest", str(root), "-c", _collection(), *args)
        assert done.returncode == ExitStatus.UNREADABLE, done.stderr
        error = assert_one_error_line(done.stderr)
        assert "red\\x1b[31m.pdf" in error and "\x1b" not in done.stderr
        notices = [line for line in done.stderr.splitlines() if not line.startswith("error:")]
        assert notices == ["1 skipped (not loaded): 1 .xlsx (not a supported type)"]
        known = ("would add: ", "would skip: ")
        for line in done.stdout.splitlines()[1:]:
            assert line.strip().startswith(known), done.stdout
        if args:
            assert "  would add: names/ok\\nerror: forged line.txt" in done.stdout
            assert (
                f"  would skip: {root}/tab\\there.xlsx (.xlsx: not a supported type)" in done.stdout
            )


def test_empty_pdfs_and_stray_bytes_load_with_notices(weaviate_server: Any, tmp_path: Path) -> None:
    root = tmp_path / "odd"
    root.mkdir()
    (root / "nothing.pdf").write_bytes(pdf_without_pages())
    (root / "french.txt").write_bytes(FRENCH.encode() + b"\xff fin.")
    (root / "chinese.txt").write_bytes(CHINESE.encode() + b"\xff" + CHINESE.encode())
    (root / "ascii.txt").write_bytes(b"The value is \xc3( here.\nAnd one more line.\n")
    shutil.copy(SAMPLES / "zh_rail_history.gb18030.txt", root / "rail.txt")
    name = _collection()

    done = run_stitcher("ingest", str(root), "-c", name)
    assert done.returncode == ExitStatus.OK, done.stderr
    assert "4 added" in done.stdout and "1 empty" in done.stdout
    assert "error:" not in done.stderr
    notices = done.stderr.splitlines()
    assert f"{root}/nothing.pdf: empty (no text to index); skipped" in notices
    for file_name in ("french.txt", "chinese.txt", "ascii.txt"):
        # Exactly once: the file is decoded again to align its lines, which must not repeat it.
        assert (
            notices.count(
                f"{root}/{file_name}: 1 byte sequence(s) that are not UTF-8 replaced by U+FFFD "
                "(a damaged file, or one in a legacy encoding: re-save it as UTF-8)"
            )
            == 1
        )
    assert not any("rail.txt" in line for line in notices)

    found = run_stitcher("search", "Café crème", "-c", name, "--json", "-k", "1")
    assert found.returncode == ExitStatus.OK, found.stderr
    assert "odd/french.txt" in found.stdout
