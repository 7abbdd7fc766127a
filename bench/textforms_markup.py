"""Issue 32 forms of the text-forms benchmark: markup sources and man page sources.

    rst/en     CMake's reference manual (cmake-data: /usr/share/cmake-*/Help/**/*.rst), a Sphinx
               project; random files (fixed seed) of 2k+ characters up to the budget
    adoc/en    asciidoctor's README.adoc, its syntax reference (ruby-asciidoctor) and
               asciidoctor-pdf's README.adoc, one sentence per line (so the seed's splitter
               cuts almost none of their sentences: 1 case in all), and four of git's guides
               as AsciiDoc sources (git-doc's gitfaq, SubmittingPatches, ReviewingGuidelines,
               gitworkflows .txt, saved as .adoc), wrapped prose: the cases come from these
    adoc/zh    asciidoctor's README-zh_CN.adoc, one sentence per line: no sentence is cut, so
               no case (no other Chinese AsciiDoc source is packaged in Debian that we know of)
    org/en     org-drill.org (elpa-org-drill), org-make-toc's README.org and example.org,
               org-appear's README.org
    troff/en   man page sources (/usr/share/man/man{1,5,8}/*.gz decompressed, named .1/.5/.8):
    troff/zh   stitcher renders them (man or groff); manpages-zh for Chinese

The benchmark finds its cases in the text a user reads: for markup the file itself (stitcher
keeps the source), for troff the page as `man` renders it (`textforms_cases.raw_text`).
"""

from __future__ import annotations

import random
from pathlib import Path

import textforms_corpus as corpus

PACKAGES = (
    "cmake-data",
    "asciidoctor",
    "ruby-asciidoctor",
    "ruby-asciidoctor-pdf",
    "git-doc",
    "elpa-org-drill",
    "elpa-org-make-toc",
    "elpa-org-appear",
)

FORMS = (
    ("rst", "en"),
    ("adoc", "en"),
    ("adoc", "zh"),
    ("org", "en"),
    ("troff", "en"),
    ("troff", "zh"),
)

#: Suffixes of man page sources, as stitcher reads them.
TROFF_SUFFIXES = frozenset({".1", ".5", ".8"})

_MIN_FILE_CHARS = 2_000


def _build_rst(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    helps = sorted(root.glob("usr/share/cmake-*/Help"))
    if not helps:
        raise corpus.FormError("cmake-data's Help directory is missing (package not downloaded?)")
    files = sorted(p for p in helps[-1].rglob("*.rst") if p.stat().st_size >= _MIN_FILE_CHARS)
    rng.shuffle(files)
    used: list[str] = []
    total = 0
    for path in files:
        if total >= budget:
            break
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > budget // 3:
            continue  # one manual would take over the form
        relative = path.relative_to(helps[-1]).as_posix().replace("/", "-")
        (out / relative).write_text(text, encoding="utf-8")
        used.append(str(path))
        total += len(text)
    return used, f"{len(used)} random .rst files (fixed seed) of CMake's Sphinx manual"


_ADOC = {
    "en": (
        "usr/share/doc/asciidoctor/README.adoc.gz",
        "usr/share/rubygems-integration/all/gems/asciidoctor-*/data/reference/syntax.adoc",
        "usr/share/doc/ruby-asciidoctor-pdf/README.adoc.gz",
        # git's documentation is AsciiDoc, kept under .txt names (git < 2.49)
        "usr/share/doc/git-doc/gitfaq.txt",
        "usr/share/doc/git-doc/SubmittingPatches.txt",
        "usr/share/doc/git-doc/ReviewingGuidelines.txt",
        "usr/share/doc/git-doc/gitworkflows.txt",
    ),
    "zh": ("usr/share/doc/asciidoctor/README-zh_CN.adoc.gz",),
}
_ORG = (
    "usr/share/doc/elpa-org-drill/org-drill.org.gz",
    "usr/share/doc/elpa-org-make-toc/README.org.gz",
    "usr/share/doc/elpa-org-make-toc/example.org.gz",
    "usr/share/doc/elpa-org-appear/README.org*",
)


def _copy_files(
    patterns: tuple[str, ...], root: Path, out: Path, suffix: str | None = None
) -> list[str]:
    used: list[str] = []
    for pattern in patterns:
        found = sorted(root.glob(pattern))
        if not found:
            raise corpus.FormError(f"{root / pattern} is missing (package not downloaded?)")
        source = found[-1]
        package = source.parts[len(root.parts) + 3]  # usr/share/doc/PACKAGE/...
        name = source.name.removesuffix(".gz")
        if suffix is not None:
            name = str(Path(name).with_suffix(suffix))  # git's AsciiDoc .txt files
        (out / f"{package}-{name}").write_text(corpus._read_maybe_gz(source), encoding="utf-8")
        used.append(str(source))
    return used


def _build_adoc(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    used = _copy_files(_ADOC[lang], root, out, suffix=".adoc")
    return used, "whole files"


def _build_org(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    used = _copy_files(_ORG, root, out)
    return used, "whole files"


def _build_troff(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    base = Path("/usr/share/man") if lang == "en" else corpus._require(root / "usr/share/man/zh_CN")
    pages = sorted(
        p
        for section in ("man1", "man5", "man8")
        for p in (base / section).glob("*.gz")
        if p.is_file() and not p.is_symlink()
    )
    rng.shuffle(pages)
    used: list[str] = []
    total = 0
    for page in pages:
        if total >= 2 * budget:
            break
        source = corpus._read_maybe_gz(page)
        if source.lstrip().startswith(".so") or not 1500 <= len(source) <= budget // 4:
            continue  # links, pages that would take over the form, stubs
        stem = page.name.removesuffix(".gz")
        (out / f"{page.parent.name}-{stem.rsplit('.', 1)[0]}.{page.parent.name[3:]}").write_text(
            source, encoding="utf-8"
        )
        used.append(str(page))
        total += len(source)
    return used, f"{len(used)} random man page sources (fixed seed), rendered by stitcher"


BUILDERS = {"rst": _build_rst, "adoc": _build_adoc, "org": _build_org, "troff": _build_troff}
