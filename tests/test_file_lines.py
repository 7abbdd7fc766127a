"""A chunk's `line` is a line of the file, also where loading rewrapped, trimmed or dropped
lines (stitcher.loaders.lines): the line its first word is on, as an editor shows it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from stitcher.chunking import split
from stitcher.ids import build_records, line_of
from stitcher.loaders import discover, load
from stitcher.loaders.decoding import decode_text
from stitcher.loaders.formats import read_markdown, read_plain
from stitcher.loaders.lines import line_starts

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def assert_each_line_found(original: str, loaded: str) -> None:
    starts = line_starts(original, loaded)
    lines = original.split("\n")
    assert len(starts) == len(lines)
    assert starts == sorted(starts)
    for number, line in enumerate(lines, 1):
        content = line.strip()
        if content:
            assert line_of(starts[number - 1], starts) == number, (number, line)
            # What a join can drop is the hyphen at the line's end.
            assert loaded.startswith(content[:12].rstrip("-"), starts[number - 1]), line


def test_a_markdown_file_with_front_matter_and_a_wrapped_paragraph() -> None:
    wrapped = [
        "Lighthouse keepers kept a careful log of the ships that passed,",
        "the weather of every watch and the lamp oil they burned; the",
        "entries were copied each month into the district's own ledgers.",
    ]
    original = "---\ntitle: x\n---\n\n# Head\n\n" + "\n".join(wrapped) + "\n\nlast line\n"
    loaded = read_markdown(original.encode(), "a.md").text
    assert " ".join(wrapped) in loaded  # front matter gone, the paragraph rewrapped
    starts = line_starts(original, loaded)
    for words, number in [("# Head", 5), ("Lighthouse", 7), ("weather", 8), ("entries", 9)]:
        assert line_of(loaded.index(words), starts) == number
    assert line_of(loaded.index("last"), starts) == 11
    assert line_of(0, starts) == 5


words = st.sampled_from(["alpha", "beta", "gamma-", "delta.", "epsilon,", "zeta", "eta", "theta"])
paragraphs = st.lists(st.lists(words, min_size=1, max_size=30), min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(
    paragraphs,
    st.integers(20, 72),
    st.sampled_from(["", "  ", "\t"]),
    st.integers(0, 3),
)
@example([["alpha"] * 30, ["----------"]], 20, "", 1)  # a line of dashes, not a hyphen
def test_every_line_of_a_hard_wrapped_file_is_found(
    paras: list[list[str]], width: int, indent: str, leading_blanks: int
) -> None:
    blocks = []
    for para in paras:
        lines, line = [], ""
        for word in para:
            if line and len(line) + 1 + len(word) > width:
                lines.append(indent + line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(indent + line)
        blocks.append("\n".join(lines))
    original = "\n" * leading_blanks + "\n\n".join(blocks) + "\n"
    assert_each_line_found(original, read_plain(original.encode(), "a.txt").text)


def test_every_chunk_of_the_samples_names_the_line_its_first_word_is_on() -> None:
    checked = 0
    for src in discover([str(SAMPLES)]).files:
        doc = load(src)
        if "line_starts" not in doc.metadata:
            continue
        lines = decode_text(src.path.read_bytes(), src.source).split("\n")
        for record in build_records("Lines", doc, split(doc.text)):
            first_word = doc.text[record.start : record.end].split()[0][:4]
            assert first_word in lines[record.metadata["line"] - 1], (src.source, record)
            checked += 1
        assert "line_starts" not in record.metadata  # a map, never stored with a chunk
    assert checked > 50


# One decode per file: a reader whose text is made of the file's lines hands over the text it
# decoded (`Extracted.original`), and `load` aligns lines against that; readers whose text is
# rendered or extracted hand over none, and their documents carry no line starts.
LINE_ALIGNED = {
    ".txt": b"A hard wrapped paragraph of a plain text file that runs on\nonto a second line.\n",
    ".md": b"---\ntitle: T\n---\n\n# Heading\n\nSome text that is\nwrapped.\n",
    ".info": b"\x1f\nFile: a.info,  Node: Top,  Up: (dir)\n\nTop\n***\n\nText of the node.\n",
    ".rst": b"Title\n=====\n\nSome text that is\nwrapped.\n\n::\n\n    code\n",
    ".adoc": b"= Title\n\nSome text that is\nwrapped.\n",
    ".org": b"#+TITLE: T\n\n* Heading\nSome text that is\nwrapped.\n",
}


def test_line_aligned_readers_hand_over_the_text_they_decoded() -> None:
    from stitcher.loaders.readers import READERS

    for kind, data in LINE_ALIGNED.items():
        assert READERS[kind](data, f"x{kind}").original == decode_text(data, "x"), kind
    page = b".TH T 1\n.SH NAME\nt \\- a page\n.SH DESCRIPTION\nSome text.\n"
    assert READERS[".1"](page, "t.1").original is None
    assert READERS[".html"](b"<p>Some\ntext.</p>", "t.html").original is None


def test_only_line_aligned_kinds_get_line_starts(tmp_path: Path) -> None:
    for kind, data in {**LINE_ALIGNED, ".html": b"<p>One</p>\n\n\n<p>Two\nlines</p>"}.items():
        (tmp_path / f"doc{kind}").write_bytes(data)
    loaded = {src.kind: load(src) for src in discover([str(tmp_path)]).files}
    for kind in LINE_ALIGNED:
        assert "line_starts" in loaded[kind].metadata, kind
    assert "line_starts" not in loaded[".html"].metadata
