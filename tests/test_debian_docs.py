"""Folders of documentation as Debian ships it (/usr/share/doc/PACKAGE): compressed files read by
the reader of their inner name, "README.Debian" and extensionless prose read as text, mboxes
without an extension read as mail, scripts and build files skipped with the reason, damaged or
oversized archives named. Through the installed script: tests/test_debian_docs_ingest.py."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest

from stitcher.errors import LoadError
from stitcher.loaders import SourceFile, describe_skipped, discover, load
from stitcher.loaders.compressed import MAX_DECOMPRESSED_BYTES, decompress
from stitcher.loaders.mail import looks_like_mbox
from stitcher.loaders.sniff import looks_like_prose

README_DEBIAN = """\
bash for Debian
---------------

The Debian package of bash reads /etc/bash.bashrc before the user's own
startup files. This is not done by upstream bash, and it is why a
system-wide prompt set there applies to every interactive shell.

 -- Matthias Klose <doko@debian.org>  Sat, 05 Feb 2022 10:00:00 +0100
"""

CHANGELOG = """\
bash (5.2.15-2) unstable; urgency=medium

  * Apply upstream patches 16 to 21.
  * Build the documentation again; the HTML manual was missing from the
    bash-doc package after the last upload.

 -- Matthias Klose <doko@debian.org>  Tue, 03 Jan 2023 11:22:33 +0100
"""

MANUAL_MD = """\
# Tidewater manual

The tide tables are read at dawn by the keeper on duty, who checks every
entry against the harbour's own gauge before signing them.
"""

MAN_PAGE = """\
.TH TIDEWATER 1 "2024-05-01" "tidewater 1.0" "User Commands"
.SH NAME
tidewater \\- read the tide tables
.SH DESCRIPTION
.B tidewater
prints the next high water for the harbour named on its command line,
and the low water after it. Heights are given above chart datum, in metres,
and times in the harbour's own time zone, which the tables name at the top
of every page.
"""

FEATURES = """\
Features of the tide tables
===========================

The tables list every high and low water of the year. Each entry gives
the time, the height above chart datum and the moon's phase.

Corrections for the outer harbour are printed at the foot of each page,
because the bar delays the tide there by twenty minutes.
"""

MAILBOX = """\
From keeper@example.org Mon May  6 10:12:00 2024
From: Keeper <keeper@example.org>
To: crew@example.org
Subject: The new tide tables
Date: Mon, 06 May 2024 10:12:00 +0000

The new tide tables arrived this morning. Please sign them before dawn.
"""

SCRIPT = """\
#!/bin/sh
# postinst script for tidewater: this comment explains what the script does
# in whole sentences. It is still a script, not a document.
set -e
case "$1" in
    configure) update-alternatives --install /usr/bin/tide tide /usr/bin/tidewater 10 ;;
esac
exit 0
"""

MAKEFILE = """\
# Copyright 2024 The Tidewater Authors. All rights reserved.
# Licensed under the Apache License, Version 2.0 (the "License").
# You may not use this file except in compliance with the License.

PREFIX ?= /usr/local
all: tidewater
tidewater: main.o tables.o
\t$(CC) -o $@ $^ $(LDFLAGS)
install: all
\tinstall -m 755 tidewater $(DESTDIR)$(PREFIX)/bin
"""


def debian_doc_folder(root: Path) -> Path:
    """A /usr/share/doc/PACKAGE as Debian ships one, with the files that are not documents."""
    root.mkdir(parents=True)
    (root / "README.Debian").write_text(README_DEBIAN, encoding="utf-8")
    (root / "changelog.Debian.gz").write_bytes(gzip.compress(CHANGELOG.encode()))
    (root / "copyright").write_text("Copyright: 2024 The Tidewater Authors.\n", encoding="utf-8")
    (root / "manual.md.bz2").write_bytes(bz2.compress(MANUAL_MD.encode()))
    (root / "FEATURES.xz").write_bytes(lzma.compress(FEATURES.encode()))
    (root / "tidewater.1.gz").write_bytes(gzip.compress(MAN_PAGE.encode()))
    (root / "discussion").write_text(MAILBOX, encoding="utf-8")
    (root / "examples").mkdir()
    (root / "examples" / "postinst").write_text(SCRIPT, encoding="utf-8")
    (root / "examples" / "Makefile").write_text(MAKEFILE, encoding="utf-8")
    (root / "examples" / "tables.tar.gz").write_bytes(gzip.compress(b"not read"))
    return root


def test_a_debian_doc_folder_is_read_by_name_and_content(tmp_path: Path) -> None:
    root = debian_doc_folder(tmp_path / "tidewater")
    found = discover([str(root)])
    assert found.errors == []
    assert {f.doc_id: f.kind for f in found.files} == {
        "tidewater/FEATURES.xz": ".txt",
        "tidewater/README.Debian": ".txt",
        "tidewater/changelog.Debian.gz": ".txt",
        "tidewater/copyright": ".txt",
        "tidewater/discussion": ".mbox",
        "tidewater/manual.md.bz2": ".md",
        "tidewater/tidewater.1.gz": ".1",
    }
    assert describe_skipped(found.skipped) == (
        "2 without extension (not prose by its name or content), 1 .tar.gz (not a supported type)"
    )


def test_a_version_after_the_last_dot_is_no_file_type(tmp_path: Path) -> None:
    # /usr/share/common-licenses: "Apache-2.0", "GFDL-1.3" are licences, not ".0" or ".3" files.
    licence = "Licensed under the Apache License. You may not use this file except in compliance.\n"
    (tmp_path / "Apache-2.0").write_text(licence * 20, encoding="utf-8")
    (tmp_path / "data-1.0").write_text("a,b,c\n1,2,3\n" * 20, encoding="utf-8")
    found = discover([str(tmp_path)])
    assert {f.doc_id.split("/")[-1]: f.kind for f in found.files} == {"Apache-2.0": ".txt"}
    assert describe_skipped(found.skipped) == "1 .0 (not prose by its name or content)"


def test_compressed_files_are_read_decompressed_under_their_real_name(tmp_path: Path) -> None:
    root = debian_doc_folder(tmp_path / "tidewater")
    docs = {f.doc_id: load(f) for f in discover([str(root)]).files}

    changelog = docs["tidewater/changelog.Debian.gz"]
    assert changelog.source == str(root / "changelog.Debian.gz")
    assert changelog.metadata["title"] == "changelog.Debian"
    # rewrapped like any text file, offsets into the decompressed text
    assert "the HTML manual was missing from the bash-doc package after the last upload." in (
        changelog.text
    )

    manual = docs["tidewater/manual.md.bz2"]
    assert manual.metadata["title"] == "Tidewater manual"
    assert "who checks every entry against the harbour's own gauge" in manual.text

    page = docs["tidewater/tidewater.1.gz"]
    assert page.metadata["title"] == "TIDEWATER(1)"
    assert "and the low water after it. Heights are given above chart datum" in page.text
    assert ".SH" not in page.text

    assert docs["tidewater/FEATURES.xz"].metadata["title"] == "FEATURES"
    assert docs["tidewater/README.Debian"].metadata["title"] == "README.Debian"
    mail = docs["tidewater/discussion"]
    assert mail.metadata["title"] == "The new tide tables"
    assert mail.text.startswith("From: Keeper <keeper@example.org>")


def test_a_damaged_archive_is_unreadable_not_skipped(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    whole = gzip.compress(CHANGELOG.encode())
    (root / "NEWS.Debian.gz").write_bytes(whole[: len(whole) // 2])  # cut off in transfer
    (root / "notes.txt.gz").write_bytes(b"\x1f\x8b not gzip at all")
    found = discover([str(root)])
    assert found.skipped == [] and found.errors == []
    for src in found.files:
        with pytest.raises(LoadError, match="not a readable gzip file") as caught:
            load(src)
        assert str(caught.value).startswith(src.source + ": ")


def test_a_decompression_bomb_is_skipped_with_the_reason(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    bomb = gzip.compress(b"a" * (MAX_DECOMPRESSED_BYTES + 1), compresslevel=9)
    assert len(bomb) < MAX_DECOMPRESSED_BYTES // 100
    (root / "huge.txt.gz").write_bytes(bomb)
    (root / "README").write_text("The small file is read.\n", encoding="utf-8")
    found = discover([str(root)])
    assert [f.doc_id for f in found.files] == ["docs/README"]
    assert describe_skipped(found.skipped) == "1 .txt.gz (decompresses to more than 64 MiB)"
    # named on the command line it is an error, not a skip
    named = discover([str(root / "huge.txt.gz")])
    assert named.files == []
    [error] = named.errors
    assert "decompresses to more than 64 MiB" in str(error)
    # and the loader holds the same line if the file grew after discovery
    with pytest.raises(LoadError, match="decompresses to more than 64 MiB"):
        decompress(bomb, ".gz", "huge.txt.gz")


def test_line_numbers_and_offsets_are_those_of_the_decompressed_text(tmp_path: Path) -> None:
    from stitcher.chunking import split
    from stitcher.ids import build_records, has_lines

    text = "".join(f"Line {n} of the notes ends here.\n\n" for n in range(1, 60))
    path = tmp_path / "notes.txt.gz"
    path.write_bytes(gzip.compress(text.encode()))
    doc = load(SourceFile(path, "docs/notes.txt.gz", str(path)))
    assert doc.text == text.rstrip()
    chunks = split(doc.text, 120, 20)
    records = build_records("Docs", doc, chunks)
    for record in records:
        assert record.text == doc.text[record.start : record.end]
        first_line = doc.text.count("\n", 0, record.start) + 1
        assert record.metadata["line"] == first_line
    assert len(records) > 3
    # an extracted format has no lines of its file to count, compressed or not
    assert has_lines("docs/notes.txt.gz") and has_lines("docs/bash.1.gz")
    assert not has_lines("docs/manual.html.gz") and not has_lines("docs/guide.pdf.xz")


@pytest.mark.parametrize(
    ("text", "prose"),
    [
        (FEATURES, True),
        (README_DEBIAN, True),
        ("这个变量根据不同的用户选择不同的主目录。你也应该知道它的缺省值。\n" * 3, True),
        (SCRIPT, False),
        (MAKEFILE, False),
        ("proc  /proc  proc  defaults  0  0\nsysfs  /sys  sysfs  defaults  0  0\n", False),
        ("Anna Smith\nBob Jones\nCarol White\nDan Brown\n", False),  # names, no sentences
        ("", False),
    ],
)
def test_prose_is_told_from_code_and_data(text: str, prose: bool) -> None:
    assert looks_like_prose(text) is prose


@pytest.mark.parametrize(
    ("head", "mbox"),
    [
        (MAILBOX.encode(), True),
        (b"From the man page:\n       You may define an input preprocessor.\n", False),
        (b"From keeper@example.org Mon May  6 10:12:00 2024\nThis is not a header.\n", False),
        (b"From keeper@example.org Mon May  6 10:12:00 2024\nX-Tool: a\n\nbody\n", False),
    ],
)
def test_an_mbox_is_told_by_its_from_line_and_headers(head: bytes, mbox: bool) -> None:
    assert looks_like_mbox(head) is mbox
