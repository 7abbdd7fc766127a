"""What an ingest reads, without a server: every file found is loaded or skipped with a reason,
extensionless documents are recognised by name and content, deep folders and odd names are
reported on one line each, stray bytes are replaced instead of refusing the file.
(Issues 32, 33, 36; the same through the installed script: tests/test_ingest_report.py.)"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from stitcher.errors import one_line
from stitcher.loaders import EmptyDocument, SourceFile, describe_skipped, discover, load
from stitcher.loaders import formats as formats_module
from stitcher.loaders import readers as readers_module
from stitcher.loaders.decoding import decode_text, noted_repairs
from stitcher.loaders.discovery import MAX_DEPTH
from stitcher.loaders.sniff import head_is_text
from tests.test_loaders import INFO_FILE

#: Bytes of a small PNG: binary, with NUL bytes.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02"


def mixed_folder(root: Path) -> Path:
    """Two loadable files, two of unsupported types, a README, a Makefile and a binary blob."""
    root.mkdir(parents=True)
    (root / "a.txt").write_text("Alpha is the first letter.", encoding="utf-8")
    (root / "b.md").write_text("# Beta\n\nBeta comes second.", encoding="utf-8")
    (root / "c.xlsx").write_text("Gamma\n=====\n", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "sub" / "d.csv").write_text("* Delta\n", encoding="utf-8")
    (root / "README").write_text("Read me first: this folder holds letters.\n", encoding="utf-8")
    (root / "Makefile").write_text("all:\n\techo letters\n", encoding="utf-8")
    (root / "blob").write_bytes(PNG)
    (root / ".hidden.xlsx").write_text("hidden", encoding="utf-8")
    (root / "a.txt.meta.json").write_text("{}", encoding="utf-8")
    return root


def test_every_file_is_loaded_or_skipped_with_its_reason(tmp_path: Path) -> None:
    root = mixed_folder(tmp_path / "letters")
    found = discover([str(root)])
    assert found.errors == []
    assert [f.doc_id for f in found.files] == ["letters/README", "letters/a.txt", "letters/b.md"]
    assert {s.path.name: (s.kind, s.reason) for s in found.skipped} == {
        "Makefile": ("without extension", "not prose by its name or content"),
        "blob": ("without extension", "binary"),
        "c.xlsx": (".xlsx", "not a supported type"),
        "d.csv": (".csv", "not a supported type"),
    }
    # Hidden entries and sidecars are not inputs: neither loaded nor counted.
    assert describe_skipped(found.skipped) == (
        "1 .csv, 1 .xlsx (not a supported type), 1 without extension (binary), "
        "1 without extension (not prose by its name or content)"
    )
    readme = next(f for f in found.files if f.path.name == "README")
    assert readme.kind == ".txt"
    assert load(readme).text == "Read me first: this folder holds letters."


def test_the_supported_set_is_the_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader another module registers is loaded without a change here."""
    root = mixed_folder(tmp_path / "letters")
    monkeypatch.setitem(readers_module.READERS, ".xlsx", formats_module.read_plain)
    found = discover([str(root)])
    assert "letters/c.xlsx" in [f.doc_id for f in found.files]
    assert ".xlsx" not in {s.kind for s in found.skipped}


def test_a_folder_of_nothing_loadable_is_one_error_naming_the_types(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    for name in ("a.xlsx", "b.xlsx", "c.csv"):
        (root / name).write_text("text", encoding="utf-8")
    found = discover([str(root)])
    assert found.files == [] and len(found.skipped) == 3
    [error] = found.errors
    assert str(error).startswith(f"{root}: none of its files can be loaded: 2 .xlsx, 1 .csv")
    # An empty folder is not an error (prune has its own guard for it).
    (tmp_path / "empty").mkdir()
    assert discover([str(tmp_path / "empty")]).errors == []


def test_named_extensionless_files(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("Any text file named on the command line loads.\n")
    (tmp_path / "program").write_bytes(PNG)
    found = discover([str(tmp_path / "notes"), str(tmp_path / "program")])
    assert [f.doc_id for f in found.files] == ["notes"]
    [error] = found.errors
    assert f"{tmp_path}/program: binary file; text or a file of a supported type" in str(error)


@pytest.mark.parametrize(
    ("head", "is_text"),
    [
        (b"", True),
        ("Plain ASCII and UTF-8: café, 中文.\n".encode(), True),
        ("铁路的发展改变了人们的生活。\n".encode("gb18030") * 20, True),
        (INFO_FILE, True),  # NUL bytes only in GNU info index markers
        (PNG, False),
        (bytes(range(1, 32)) * 10 + b"text", False),  # control characters, no NUL
        (b"\x1b[1mbold\x1b[0m and b\x08bo\x08ol\x08ld\n", True),  # terminal and man output
        (b"\xff\xfe" + "UTF-16 with a BOM, 中文.\n".encode("utf-16-le"), True),
        (b"\xff\xfe" + b"\x00\xd8\x00\x00", False),  # a lone surrogate: not UTF-16 after all
    ],
)
def test_text_sniff(head: bytes, is_text: bool) -> None:
    assert head_is_text(head) is is_text


def test_a_utf8_character_cut_at_the_sniff_limit_is_still_text() -> None:
    line = "中文的句子。\n".encode()
    head = (line * 1000)[:8192]
    assert head_is_text(head, whole=False)


# --- deep folders ----------------------------------------------------------------------------


def deep_folder(top: Path, levels: int) -> Path:
    """`levels` nested folders "d" under `top`, with a.txt at the bottom; built with relative
    paths from inside, so no path handed to the system grows with the depth."""
    here = os.getcwd()
    top.mkdir(parents=True)
    os.chdir(top)
    try:
        for _ in range(levels):
            os.mkdir("d")
            os.chdir("d")
        Path("a.txt").write_text("At the bottom.", encoding="utf-8")
    finally:
        os.chdir(here)
    return top


def remove_deep_folder(top: Path) -> None:
    """shutil.rmtree of Python 3.11 recurses once per level: remove it bottom-up instead."""
    here = os.getcwd()
    os.chdir(top)
    depth = 0
    try:
        while os.path.isdir("d"):
            os.chdir("d")
            depth += 1
        os.unlink("a.txt")
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(here)


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    """A folder with one file at the top and a chain of 1,200 folders below."""
    top = deep_folder(tmp_path / "deep", 1200)
    (top / "top.txt").write_text("At the top.", encoding="utf-8")
    yield top
    remove_deep_folder(top)


def test_a_folder_1200_levels_deep_is_one_error_and_the_rest_loads(deep: Path) -> None:
    found = discover([str(deep)])
    assert [f.doc_id for f in found.files] == ["deep/top.txt"]
    [error] = found.errors
    message = str(error)
    assert f"folder nested more than {MAX_DEPTH} levels below {deep}" in message
    assert message.startswith(str(deep) + "/d/d/")
    assert message.split(": ")[0][len(str(deep)) :] == "/d" * (MAX_DEPTH + 1)


def test_a_folder_at_the_depth_limit_is_read(tmp_path: Path) -> None:
    top = deep_folder(tmp_path / "deep", MAX_DEPTH)
    found = discover([str(top)])
    assert found.errors == []
    assert [f.doc_id for f in found.files] == ["deep/" + "d/" * MAX_DEPTH + "a.txt"]


def test_a_symlink_loop_is_still_caught(tmp_path: Path) -> None:
    (tmp_path / "loop" / "inner").mkdir(parents=True)
    (tmp_path / "loop" / "inner" / "a.txt").write_text("text", encoding="utf-8")
    (tmp_path / "loop" / "inner" / "back").symlink_to(tmp_path / "loop")
    found = discover([str(tmp_path / "loop")])
    assert [f.doc_id for f in found.files] == ["loop/inner/a.txt"]
    [error] = found.errors
    assert "symlink loop" in str(error)


def test_a_fifo_is_skipped_as_not_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "pipes").mkdir()
    os.mkfifo(tmp_path / "pipes" / "queue")
    (tmp_path / "pipes" / "a.txt").write_text("text", encoding="utf-8")
    found = discover([str(tmp_path / "pipes")])
    assert [(s.kind, s.reason) for s in found.skipped] == [("fifo", "not a regular file")]


# --- one line per message --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain name.txt", "plain name.txt"),
        ("two\nlines.txt", "two\\nlines.txt"),
        ("tab\there\r.txt", "tab\\there\\r.txt"),
        ("red\x1b[31m.pdf", "red\\x1b[31m.pdf"),
        ("nel\x85 and del\x7f", "nel\\x85 and del\\x7f"),
        ("backwards\u202etxt.exe", "backwards\\u202etxt.exe"),
        ("中文 café \\ backslash", "中文 café \\ backslash"),
    ],
)
def test_one_line_escapes_control_characters(text: str, shown: str) -> None:
    assert one_line(text) == shown
    assert "\n" not in one_line(text) and "\x1b" not in one_line(text)


# --- empty PDFs ------------------------------------------------------------------------------


def pdf_without_pages() -> bytes:
    from pypdf import PdfWriter

    out = io.BytesIO()
    PdfWriter().write(out)
    return out.getvalue()


def test_a_pdf_without_pages_is_empty_not_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "nothing.pdf"
    path.write_bytes(pdf_without_pages())
    with pytest.raises(EmptyDocument, match="empty"):
        load(SourceFile(path, "docs/nothing.pdf", str(path)))


# --- stray bytes -----------------------------------------------------------------------------

FRENCH = "Café crème brûlée à la française, très élégant. " * 4
CHINESE = "铁路的发展改变了人们的生活方式。" * 4


@pytest.mark.parametrize(
    ("data", "text", "replaced"),
    [
        (FRENCH.encode() + b"\xff" + b" fin.", FRENCH + "\ufffd fin.", 1),
        (CHINESE.encode() + b"\xff\xfe" + CHINESE.encode(), CHINESE + "\ufffd\ufffd" + CHINESE, 2),
        (
            b"The value is \xc3( here.\nMore plain ASCII text on this line.\n",
            "The value is \ufffd( here.\nMore plain ASCII text on this line.\n",
            1,
        ),
        # A U+FFFD the file itself holds is text, not a repair.
        ("ok \ufffd café ".encode() + b"\x80", "ok \ufffd café \ufffd", 1),
    ],
)
def test_a_few_stray_bytes_are_replaced_with_a_notice(
    data: bytes, text: str, replaced: int
) -> None:
    with noted_repairs() as notes:
        assert decode_text(data, "x.txt") == text
    assert notes == [
        f"x.txt: {replaced} byte sequence(s) that are not UTF-8 replaced by U+FFFD "
        "(a damaged file, or one in a legacy encoding: re-save it as UTF-8)"
    ]


def test_legacy_code_pages_need_evidence() -> None:
    """Three accented words in Windows-1252 are a code page; one odd byte is not."""
    text = " ".join(["naïve café"] * 3)
    with noted_repairs() as notes:
        assert decode_text(text.encode("cp1252"), "x.txt") == text
        assert decode_text(b"ASCII text with one byte \xe9 in it.", "x.txt").count("\ufffd") == 1
    assert len(notes) == 1


def test_gb18030_is_not_taken_for_damaged_utf8() -> None:
    sample = Path(__file__).parent.parent / "samples" / "zh_rail_history.gb18030.txt"
    with noted_repairs() as notes:
        text = decode_text(sample.read_bytes(), str(sample))
    assert text.startswith("蒸汽、钢轨与时刻表——铁路发展简史") and "\ufffd" not in text
    assert notes == []


def test_many_bad_bytes_still_refuse_the_file() -> None:
    data = b"ASCII text. " * 20 + bytes(range(0x80, 0x100)) * 2
    with pytest.raises(Exception, match="cannot detect the text encoding"):
        decode_text(data, "x.txt")


def test_outside_a_notes_block_repairs_are_silent() -> None:
    assert decode_text(b"abc \xff", "x.txt") == "abc \ufffd"
