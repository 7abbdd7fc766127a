"""Discovery: which files a run reads, their stable doc_ids, and problems with named inputs."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path

import pytest

from stitcher.loaders import compile_glob, discover


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp_path/work/samples with nested files of every kind discovery must tell apart."""
    root = tmp_path / "work" / "samples"
    files = {
        "a.txt": "A",
        "b.md": "B",
        "zh/中文.txt": "中",
        "zh/deep/c.html": "<p>C</p>",
        "zh/deep/c.html.meta.json": "{}",
        "img/logo.png": "png",
        "notes": "no extension",
        "UPPER.MD": "upper",
        ".hidden.txt": "hidden",
        ".git/config.txt": "hidden dir",
    }
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


EXPECTED_IDS = [
    "samples/UPPER.MD",
    "samples/a.txt",
    "samples/b.md",
    "samples/zh/deep/c.html",
    "samples/zh/中文.txt",
]


def ids(paths: list[str], glob: str | None = None) -> list[str]:
    return [f.doc_id for f in discover(paths, glob=glob).files]


def test_directory_walk(tree: Path) -> None:
    found = discover([str(tree)])
    assert [f.doc_id for f in found.files] == EXPECTED_IDS
    assert found.errors == []
    assert found.roots == ["samples"]
    assert [(s.path, s.kind, s.reason) for s in found.skipped] == [
        (tree / "img" / "logo.png", ".png", "not a supported type"),
        (tree / "notes", "without extension", "not prose by its name or content"),
    ]
    by_id = {f.doc_id: f for f in found.files}
    assert by_id["samples/zh/中文.txt"].source == os.path.join(str(tree), "zh", "中文.txt")
    assert by_id["samples/zh/中文.txt"].path.read_text(encoding="utf-8") == "中"


def test_doc_ids_do_not_depend_on_the_current_directory(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree.parent)
    relative = ids(["./samples"])
    trailing = ids(["samples/"])
    absolute = ids([str(tree)])
    monkeypatch.chdir(tree)
    dot = ids(["."])
    monkeypatch.chdir(tree / "zh")
    dotdot = ids([".."])
    assert relative == trailing == absolute == dot == dotdot == EXPECTED_IDS


def test_source_is_the_path_as_given(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree.parent)
    sources = [f.source for f in discover(["./samples"]).files]
    assert "./samples/a.txt" in sources


def test_file_argument_gets_its_name_as_doc_id(tree: Path) -> None:
    found = discover([str(tree / "zh" / "中文.txt")])
    assert [f.doc_id for f in found.files] == ["中文.txt"]
    assert found.roots == ["中文.txt"]


def test_glob_filters_files_under_directories(tree: Path) -> None:
    assert ids([str(tree)], glob="**/*.html") == ["samples/zh/deep/c.html"]
    assert ids([str(tree)], glob="zh/*.txt") == ["samples/zh/中文.txt"]
    assert ids([str(tree)], glob="*.txt") == ["samples/a.txt", "samples/zh/中文.txt"]
    # Files named explicitly are not filtered.
    assert ids([str(tree / "b.md")], glob="*.txt") == ["b.md"]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("**/*.md", "a.txt", False),
        ("docs/*.md", "docs/a.md", True),
        ("docs/*.md", "docs/x/a.md", False),
        ("docs/**", "docs/x/a.md", True),
        ("*.md", "x/y/a.md", True),
        ("a?.txt", "ab.txt", True),
        ("[!a]*.txt", "a.txt", False),
        ("[ab].txt", "b.txt", True),
    ],
)
def test_compile_glob(pattern: str, path: str, matches: bool) -> None:
    assert compile_glob(pattern)(path) is matches


def test_stdin_list(tree: Path) -> None:
    listed = f"{tree / 'a.txt'}\n\n{tree / 'zh'}\r\n   \n"
    found = discover(["-", str(tree / "b.md")], stdin=io.StringIO(listed))
    assert [f.doc_id for f in found.files] == ["a.txt", "b.md", "zh/deep/c.html", "zh/中文.txt"]
    assert found.roots == ["a.txt", "zh", "b.md"]


def test_missing_path_is_an_error_and_others_still_load(tree: Path) -> None:
    found = discover([str(tree / "nope.txt"), str(tree / "a.txt")])
    assert [str(e) for e in found.errors] == [f"{tree / 'nope.txt'}: no such file or directory"]
    assert [f.doc_id for f in found.files] == ["a.txt"]
    assert found.roots == ["a.txt"]


def test_named_file_with_unsupported_extension(tree: Path) -> None:
    found = discover([str(tree / "img" / "logo.png")])
    assert found.files == []
    assert len(found.errors) == 1
    assert "unsupported file type '.png'" in str(found.errors[0])


def test_duplicate_doc_ids_name_both_files(tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "other" / "a.txt"
    other.parent.mkdir()
    other.write_text("other A", encoding="utf-8")
    found = discover([str(tree / "a.txt"), str(other)])
    assert [f.source for f in found.files] == [str(tree / "a.txt")]
    (error,) = found.errors
    assert str(error).startswith(f"{other}: ")
    assert str(tree / "a.txt") in str(error)


def test_two_directories_with_the_same_name(tree: Path, tmp_path: Path) -> None:
    twin = tmp_path / "elsewhere" / "samples"
    twin.mkdir(parents=True)
    (twin / "x.txt").write_text("x", encoding="utf-8")
    found = discover([str(tree), str(twin)])
    assert [f.doc_id for f in found.files] == EXPECTED_IDS
    (error,) = found.errors
    assert "both directories are named 'samples'" in str(error)


def test_the_same_file_reached_twice_is_kept_once(tree: Path) -> None:
    found = discover([str(tree), str(tree / "a.txt"), str(tree) + "/"])
    assert [f.doc_id for f in found.files] == EXPECTED_IDS
    assert found.errors == []


def test_broken_symlinks(tree: Path) -> None:
    (tree / "dangling.txt").symlink_to(tree / "gone.txt")
    found = discover([str(tree), str(tree / "dangling.txt")])
    assert [f.doc_id for f in found.files] == EXPECTED_IDS
    messages = [str(e) for e in found.errors]
    assert len(messages) == 2
    assert all("broken symlink" in m and "gone.txt" in m for m in messages)


def test_symlink_loops(tree: Path) -> None:
    (tree / "self.txt").symlink_to(tree / "self.txt")
    (tree / "zh" / "up").symlink_to(tree)  # a directory link back to the root
    found = discover([str(tree)])
    assert [f.doc_id for f in found.files] == EXPECTED_IDS
    messages = sorted(str(e) for e in found.errors)
    assert len(messages) == 2
    assert messages[0].startswith(f"{tree / 'self.txt'}: symlink loop")
    assert messages[1].startswith(f"{tree / 'zh' / 'up'}: symlink loop")


def test_symlinked_directory_outside_the_tree_is_followed(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.md").write_text("o", encoding="utf-8")
    (tree / "linked").symlink_to(outside)
    assert "samples/linked/o.md" in ids([str(tree)])


def test_unreadable_directory(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = str(tree / "zh")
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if str(path) == blocked:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = discover([str(tree)])
    assert [f.doc_id for f in found.files] == ["samples/UPPER.MD", "samples/a.txt", "samples/b.md"]
    assert [str(e) for e in found.errors] == [
        f"{blocked}: cannot list the directory (Permission denied)"
    ]


def test_the_root_of_a_doc_id_respects_roots_and_glob(tree: Path) -> None:
    found = discover([str(tree), str(tree.parent / "missing")])
    assert found.root_of("samples/old.txt") == "samples"
    assert found.root_of("samplesX/a.txt") is None
    assert found.root_of("other/a.txt") is None
    md_only = discover([str(tree)], glob="*.md")
    assert md_only.root_of("samples/gone.md") == "samples"
    assert md_only.root_of("samples/gone.txt") is None
    single = discover([str(tree / "a.txt")])
    assert single.root_of("a.txt") == "a.txt"
    assert single.root_of("b.txt") is None
