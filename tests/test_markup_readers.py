"""reST, AsciiDoc, Org and man page sources: text, metadata, structure kept line by line.

The golden files in tests/golden_forms/readers are short excerpts written for these tests:
FILE is the input, FILE.out.txt the text the loader stores, FILE.want.json the metadata it must
find (dates as ISO strings; not ".meta.json": that would be a sidecar).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest

from stitcher.errors import LoadError
from stitcher.loaders import EmptyDocument, SourceFile, discover, load
from stitcher.loaders.formats import READERS
from stitcher.loaders.markup import KEPT, NEW, PROSE, rewrap_lines

READERS_DIR = Path(__file__).parent / "golden_forms" / "readers"
GOLDEN = sorted(
    path.name
    for path in READERS_DIR.iterdir()
    if not path.name.endswith((".out.txt", ".want.json"))
)
MARKUP = [name for name in GOLDEN if not name.endswith(".1")]
HAVE_RENDERER = bool(shutil.which("man") or shutil.which("groff"))


def read(name: str) -> tuple[str, dict[str, object]]:
    path = READERS_DIR / name
    extracted = READERS[path.suffix](path.read_bytes(), name)
    return extracted.text, extracted.meta


def plain(value: object) -> object:
    return value.isoformat() if isinstance(value, dt.datetime) else value


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_text_and_metadata(name: str) -> None:
    if name.endswith(".1") and not HAVE_RENDERER:
        pytest.skip("neither man nor groff is installed")
    text, meta = read(name)
    expected = (READERS_DIR / f"{name}.out.txt").read_text(encoding="utf-8")
    assert text == expected.rstrip("\n")
    wanted = json.loads((READERS_DIR / f"{name}.want.json").read_text(encoding="utf-8"))
    assert {key: plain(meta.get(key)) for key in wanted} == wanted


@pytest.mark.parametrize("name", MARKUP)
def test_markup_text_is_the_source_minus_whitespace(name: str) -> None:
    """Offsets stay meaningful: only whitespace inside prose differs from the file."""
    text, _ = read(name)
    source = (READERS_DIR / name).read_text(encoding="utf-8")
    assert re.sub(r"\s+", "", text) == re.sub(r"\s+", "", source)
    assert len(text.split("\n")) < len(source.rstrip("\n").split("\n"))  # something was joined


# Lines that must come back as lines of their own, exactly as written.
KEPT_LINES = {
    "sphinx.rst": [
        "    $ pip install keeper",
        "    $ keeper --version",
        "    keeper 2.1",
        ".. code-block:: ini",
        "   :caption: keeper.ini",
        "   target = /mnt/second",
        "| ``-v``      | print every file that is copied    |",
        "+=============+====================================+",
        "0          copied",
        "1          the second disk is missing",
        ".. This comment is for the maintainers: the table above",
        "   must list every exit code.",
        ">>> import keeper",
        '>>> keeper.run("/mnt/second")',
        "- Nothing is lost while it waits.",
        "#. Run the keeper once by hand.",
        "Options",
        "-------",
        ":Author: Ada Lovelace",
    ],
    "guide.adoc": [
        "$ pip install keeper",
        "$ keeper --version",
        "  (literal output, kept as it is)",
        "|`-v`",
        "|print every file that is copied",
        "|===",
        "  $ keeper status --long",
        "  target: /mnt/second",
        ". Run the keeper once by hand.",
        "== Options",
        ".Installing",
        "[source,shell]",
        ":toc:",
    ],
    "notes.org": [
        "$ pip install keeper",
        "  (literal output, kept as it is)",
        "| =-v=    | print every file that is copied |",
        "|---------+---------------------------------|",
        "  :CUSTOM_ID: install",
        ": $ keeper status --long",
        ": target: /mnt/second",
        "- Nothing is lost while it waits.",
        "  2. Run the keeper once by hand.",
        "* TODO Options",
        "#+DATE: <2024-05-01 Wed>",
    ],
    "keeper.1": ["       $ keeper -v /mnt/second", "       copied 3 files"],
}

# Sentences that were hard-wrapped in the file and must be one line in the text.
JOINED = {
    "sphinx.rst": [
        "Mount the second disk at the target path that the configuration file names.",
        "   The keeper never touches the first disk, even when the second disk is full",
        "- The log says once an hour that the keeper is waiting for the second disk to appear.",
        "   Copy every snapshot that is not on the target yet and prune the old ones;",
    ],
    "guide.adoc": [
        "** Nothing is lost while it waits, and nothing is copied twice when the disk comes back.",
        ". Mount the second disk at the target path that the configuration file names.",
        "NOTE: The keeper never touches the first disk, even when the second disk is full",
        "retention:: the number of days a copy is kept before the keeper removes it from",
    ],
    "notes.org": [
        "  1. Mount the second disk at the target path that the configuration file names.",
        "- retention :: the number of days a copy is kept before the keeper removes it from",
        "The keeper never touches the first disk, even when the second disk is full and",
    ],
    "chinese.rst": [
        "并删除超过保留期限的旧副本；保留期限在配置文件中设置",
        "等待期间不会丢失任何数据",
    ],
    "keeper.1": ["which you set in the configuration file described below. It never touches"],
}


@pytest.mark.parametrize("name", sorted(KEPT_LINES))
def test_structure_lines_are_kept(name: str) -> None:
    if name.endswith(".1") and not HAVE_RENDERER:
        pytest.skip("neither man nor groff is installed")
    lines = read(name)[0].split("\n")
    for line in KEPT_LINES[name]:
        assert line in lines, line


@pytest.mark.parametrize("name", sorted(JOINED))
def test_wrapped_sentences_are_joined(name: str) -> None:
    if name.endswith(".1") and not HAVE_RENDERER:
        pytest.skip("neither man nor groff is installed")
    text = read(name)[0]
    for sentence in JOINED[name]:
        assert any(sentence in line for line in text.split("\n")), sentence


def test_chinese_lines_join_without_a_space() -> None:
    text, meta = read("chinese.rst")
    assert "旧副本；保留期限" in text
    assert meta["author"] == "张三"


def test_rewrap_lines_keeps_kept_lines_and_starts_new_paragraphs() -> None:
    prose = "This sentence is long enough to have been wrapped by an editor at"
    lines = [prose, "seventy columns.", "code line one", "code line two", "- item", "goes on"]
    roles = [PROSE, PROSE, KEPT, KEPT, NEW, PROSE]
    out = rewrap_lines(lines, roles).split("\n")
    assert out[0] == f"{prose} seventy columns."
    assert out[1:3] == ["code line one", "code line two"]
    assert out[3].startswith("- item")


def test_a_private_use_separator_in_the_text_does_not_confuse_rewrap() -> None:
    lines = ["a line with \ue020 in it that is long enough to be wrapped by a", "tool.", "x"]
    out = rewrap_lines(lines, [PROSE, PROSE, KEPT])
    assert out.split("\n")[-1] == "x"
    assert "\ue020" in out


@pytest.mark.skipif(not HAVE_RENDERER, reason="neither man nor groff is installed")
def test_man_source_is_rendered_without_troff_requests() -> None:
    text, meta = read("keeper.1")
    assert ".TH" not in text and "\\f" not in text and "\\-" not in text
    assert meta["title"] == "KEEPER(1)"


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_groff_renders_when_man_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("groff", "troff", "grotty", "tbl", "preconv", "eqn", "pic", "soelim"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    text, _ = read("keeper.1")
    assert "keeper - copy nightly snapshots to a second disk" in text
    assert "       $ keeper -v /mnt/second" in text.split("\n")


def test_man_source_without_man_or_groff_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LoadError, match="cannot render troff: neither groff nor man is installed"):
        read("keeper.1")


def test_a_numbered_file_that_is_not_troff_is_plain_text(tmp_path: Path) -> None:
    log = tmp_path / "syslog.1"
    log.write_text("Dec  7 10:00:01 host cron[42]: job started\n", encoding="utf-8")
    [src] = discover([str(tmp_path)]).files
    assert load(src).text == "Dec  7 10:00:01 host cron[42]: job started"


def test_a_page_that_only_includes_another_is_skipped(tmp_path: Path) -> None:
    stub = tmp_path / "keeper-run.1"
    stub.write_text(".so man1/keeper.1\n", encoding="utf-8")
    [src] = discover([str(tmp_path)]).files
    with pytest.raises(EmptyDocument, match=r"keeper-run\.1: empty .*skipped"):
        load(src)


@pytest.mark.parametrize("suffix", [".rst", ".rest", ".adoc", ".asciidoc", ".org", ".1", ".8"])
def test_discovery_takes_the_new_suffixes(tmp_path: Path, suffix: str) -> None:
    (tmp_path / f"doc{suffix}").write_text("Some text.\n", encoding="utf-8")
    files = discover([str(tmp_path)]).files
    assert [f.path.suffix for f in files] == [suffix]
    assert isinstance(files[0], SourceFile)


def test_load_gives_typed_metadata_from_the_file() -> None:
    [src] = [f for f in discover([str(READERS_DIR)]).files if f.path.name == "notes.org"]
    document = load(src)
    assert document.metadata["title"] == "Keeper User Guide"
    assert document.metadata["date"] == dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    assert document.metadata["tags"] == ["backup", "snapshots", "setup", "中文"]


@pytest.mark.parametrize(
    ("written", "expected"),
    [("May 2024", dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)), ("Spring 2024", None)],
)
def test_a_header_date_is_parsed_loosely_or_dropped(
    tmp_path: Path, written: str, expected: dt.datetime | None
) -> None:
    """A date people write ("May 2024") is read; one that is no date is dropped, not refused."""
    (tmp_path / "notes.rst").write_text(
        f"Notes\n=====\n\n:date: {written}\n\nSome text.\n", encoding="utf-8"
    )
    [src] = discover([str(tmp_path)]).files
    document = load(src)
    if expected is None:
        assert "date" in document.volatile  # the file's modification time stands in
    else:
        assert document.metadata["date"] == expected


def test_sphinx_title_directive_names_the_page() -> None:
    from stitcher.loaders.rst import read_rst

    data = b".. title:: CMake Reference\n\nIntroduction\n############\n\nCMake builds.\n"
    assert read_rst(data, "index.rst").meta["title"] == "CMake Reference"


def test_asciidoc_lines_meant_as_lines_are_kept() -> None:
    """[verse], [%hardbreaks], ":hardbreaks-option:" and " +" keep line breaks the author meant."""
    from stitcher.loaders.asciidoc import read_asciidoc

    prose = "This line is long enough that a tool could have wrapped it at seventy columns"
    source = (
        f"= Poems\n\n[verse]\n{prose}\nand this one reads on.\n\n[%hardbreaks]\n{prose}\n"
        f"and this one too.\n\n{prose} +\nafter a hard break.\n\n:hardbreaks-option:\n\n"
        f"{prose}\nstill kept.\n\n:!hardbreaks-option:\n\n{prose}\nnow joined.\n"
    )
    lines = read_asciidoc(source.encode(), "poems.adoc").text.split("\n")
    for kept in ("and this one reads on.", "and this one too.", "after a hard break."):
        assert kept in lines
    assert "still kept." in lines
    assert f"{prose} now joined." in lines


def test_org_description_item_joins_its_hanging_indent() -> None:
    from stitcher.loaders.org import read_org

    source = (
        "* Scope\n\n- tree :: The subtree starting with the entry at the cursor, which is the\n"
        "          default when nothing else is said in the file header.\n"
        "- file :: The current buffer.\n"
    )
    lines = read_org(source.encode(), "scope.org").text.split("\n")
    assert lines[2] == (
        "- tree :: The subtree starting with the entry at the cursor, which is the default "
        "when nothing else is said in the file header."
    )
    assert lines[3] == "- file :: The current buffer."
