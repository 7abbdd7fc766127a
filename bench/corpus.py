"""Build a plain-text benchmark corpus from Debian documentation packages nobody here wrote.

Sources (Debian bookworm packages, unpacked with `dpkg -x`):

- Chinese: manpages-zh (roff man pages under usr/share/man/zh_CN and zh_TW) and the zh-CN /
  zh-TW HTML of debian-handbook (partly translated: some paragraphs are still English).
- English: debian-handbook en-US HTML and python3.11-doc HTML.

Output, one UTF-8 .txt per page, paragraphs separated by a blank line:

    OUT/zh/man-zh_CN/man1/ls.1.txt      OUT/zh/handbook-zh-CN/sect.apt-get.txt
    OUT/zh/man-zh_TW/...                OUT/zh/handbook-zh-TW/...
    OUT/en/handbook-en-US/...           OUT/en/python-3.11/library/os.txt
    OUT/manifest.json                   (sources, file counts and sizes)

Re-running with the same arguments rewrites identical files and removes .txt files this script
wrote before but would not write now, so the directory always matches the arguments.
Nothing is downloaded unless --fetch is given, which runs the two apt-get commands below.

    python bench/corpus.py --fetch --out /tmp/stitcher-corpus          # first time
    python bench/corpus.py --out /tmp/stitcher-corpus --lang zh --max-docs 200
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("manpages-zh", "debian-handbook", "python3.11-doc")
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "stitcher" / "bench"
DEFAULT_DEBS = CACHE_DIR / "debs"
DEFAULT_ROOT = CACHE_DIR / "root"

MAN_DIR = Path("usr/share/man")
HANDBOOK_DIR = Path("usr/share/doc/debian-handbook/html")
PYTHON_DIR = Path("usr/share/doc/python3.11/html")

# Python doc pages that are indexes or tables of contents, not prose.
_PYTHON_SKIP = re.compile(r"^(genindex.*|py-modindex|search|contents|index|download)\.html$")
# Handbook: the title page/table of contents.
_HANDBOOK_SKIP = {"index.html"}


class CorpusError(Exception):
    """The source packages are missing or cannot be read."""


@dataclass(frozen=True)
class Source:
    """One group of documents: where they come from and how to turn one into text."""

    lang: str  # "zh" or "en"
    name: str  # output subdirectory, e.g. "man-zh_CN"
    root: Path  # directory scanned for input files
    files: tuple[Path, ...]
    convert: Callable[[Path], str]
    suffix: str  # input suffix replaced by .txt


# ---------------------------------------------------------------------------------------------
# Fetching
# ---------------------------------------------------------------------------------------------


def fetch_commands(debs: Path, root: Path) -> list[str]:
    """The shell commands that download and unpack the packages (shown when they are missing)."""
    return [
        "apt-get update",
        f"mkdir -p {debs} {root} && cd {debs} && apt-get download {' '.join(PACKAGES)}",
        f'for d in {debs}/*.deb; do dpkg -x "$d" {root}; done',
    ]


def fetch(debs: Path, root: Path) -> None:
    """Download the .deb files with apt-get and unpack them with dpkg -x (no installation)."""
    debs.mkdir(parents=True, exist_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    for command in fetch_commands(debs, root):
        print(f"+ {command}", file=sys.stderr)
        subprocess.run(command, shell=True, check=True)


def _check_unpacked(root: Path, debs: Path) -> None:
    missing = [
        str(root / path)
        for path in (MAN_DIR / "zh_CN", HANDBOOK_DIR / "en-US", PYTHON_DIR / "library")
        if not (root / path).is_dir()
    ]
    if missing:
        commands = "\n  ".join(fetch_commands(debs, root))
        raise CorpusError(
            f"source packages not found ({', '.join(missing)} missing). Run this script with "
            f"--fetch, or by hand:\n  {commands}"
        )


# ---------------------------------------------------------------------------------------------
# Text clean-up shared by both formats
# ---------------------------------------------------------------------------------------------

_CJK = r"\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f"
# A line break between two CJK characters is an artefact of source formatting, not a space.
_CJK_BREAK = re.compile(rf"(?<=[{_CJK}])\s*\n\s*(?=[{_CJK}])")
_SPACES = re.compile(r"\s+")
_OVERSTRIKE = re.compile(r".\x08")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BLANK_RUNS = re.compile(r"\n{3,}")


def _normalise_inline(text: str) -> str:
    return _SPACES.sub(" ", _CJK_BREAK.sub("", text)).strip()


# ---------------------------------------------------------------------------------------------
# Man pages
# ---------------------------------------------------------------------------------------------


def _read_man_source(path: Path) -> str:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace")


def render_man_groff(path: Path) -> str:
    """Render a man page with groff, one unwrapped line per paragraph.

    A line length of 2000 ens and no hyphenation keep each paragraph on one line, so Chinese
    sentences are not broken by hard wraps; -P-cbou asks grotty for plain characters (no SGR
    escapes, no overstrikes).
    """
    result = subprocess.run(
        ["groff", "-k", "-Kutf-8", "-Tutf8", "-mandoc", "-rLL=2000n", "-rHY=0", "-P-cbou"],
        input=_read_man_source(path).encode("utf-8"),
        capture_output=True,
        check=False,
        timeout=60,
    )
    if result.returncode != 0 and not result.stdout:
        raise CorpusError(f"groff failed on {path}: {result.stderr.decode(errors='replace')[:200]}")
    return _clean_man_output(result.stdout.decode("utf-8", errors="replace"))


def _clean_man_output(text: str) -> str:
    text = _ANSI.sub("", _OVERSTRIKE.sub("", text))
    lines = [line.strip() for line in text.splitlines()]
    # Drop the running header ("LS(1)   ...   LS(1)") and footer (version, date, name).
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if lines:
        lines.pop(0)
    if lines:
        lines.pop()
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip() + "\n"


_ROFF_FONT = re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)")
_ROFF_SPECIAL = {
    r"\-": "-",
    r"\e": "\\",
    r"\&": "",
    r"\ ": " ",
    r"\~": " ",
    r"\|": "",
    r"\^": "",
    r"\,": "",
    r"\/": "",
    r"\(em": "—",
    r"\(en": "–",
    r"\(bu": "•",
    r"\(co": "©",
    r"\(lq": "“",
    r"\(rq": "”",
    r"\(aq": "'",
    r"\(dq": '"',
    r"\(oq": "‘",
    r"\(cq": "’",
}
_ROFF_OTHER_ESCAPE = re.compile(r"\\(?:\(..|\[[^\]]*\]|[*n]\(..|[*n].|s[-+]?\d|.)")
_ROFF_BREAK = {".PP", ".P", ".LP", ".TP", ".IP", ".SH", ".SS", ".HP", ".br", ".sp", ".RS", ".RE"}


def _roff_inline(text: str) -> str:
    text = _ROFF_FONT.sub("", text)
    for escape, replacement in _ROFF_SPECIAL.items():
        text = text.replace(escape, replacement)
    return _ROFF_OTHER_ESCAPE.sub("", text)


def render_man_fallback(path: Path) -> str:
    """Crude roff-to-text for machines without groff: paragraphs, headings and inline text."""
    paragraphs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            paragraphs.append(_normalise_inline(" ".join(current)))
            current.clear()

    for line in _read_man_source(path).splitlines():
        if line.startswith(('.\\"', "'\\\"", '.\\"')) or line.strip() in {".", "'"}:
            continue
        if line.startswith((".", "'")):
            macro, _, rest = line.partition(" ")
            if macro in _ROFF_BREAK:
                flush()
            if macro in {".SH", ".SS"} and rest:
                paragraphs.append(_roff_inline(rest.strip().strip('"')))
            elif macro in {".B", ".I", ".BR", ".BI", ".IB", ".IR", ".RB", ".RI", ".IP", ".TP"}:
                words = re.findall(r'"[^"]*"|\S+', rest)
                joiner = "" if macro not in {".B", ".I", ".IP"} else " "
                current.append(_roff_inline(joiner.join(w.strip('"') for w in words)))
            continue
        current.append(_roff_inline(line))
    flush()
    return "\n\n".join(p for p in paragraphs if p) + "\n"


def _man_renderer() -> Callable[[Path], str]:
    return render_man_groff if shutil.which("groff") else render_man_fallback


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

_BLOCK_TAGS = {
    "address",
    "article",
    "aside",
    "blockquote",
    "caption",
    "dd",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "section",
    "table",
    "tbody",
    "thead",
    "tr",
    "ul",
    "br",
}
_DROP_TAGS = {"script", "style", "noscript", "template", "svg", "form", "input", "button"}


def _html_paragraphs(element: object) -> list[str]:
    from bs4 import NavigableString, Tag
    from bs4.element import Comment, Doctype, ProcessingInstruction

    paragraphs: list[str] = []
    buffer: list[str] = []

    def flush() -> None:
        text = _normalise_inline("".join(buffer))
        buffer.clear()
        if text:
            paragraphs.append(text)

    def walk(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, (Comment, Doctype, ProcessingInstruction)):
                continue
            if isinstance(child, NavigableString):
                buffer.append(str(child))
            elif isinstance(child, Tag):
                if child.name in _DROP_TAGS:
                    continue
                if child.name == "pre":
                    # Code and screen output: keep its lines, only trim trailing blanks.
                    flush()
                    text = child.get_text().replace("↵", "").strip("\n").rstrip()
                    if text.strip():
                        paragraphs.append(text)
                    continue
                if child.name in {"td", "th"}:
                    buffer.append(" ")
                block = child.name in _BLOCK_TAGS
                if block:
                    flush()
                walk(child)
                if block:
                    flush()

    assert isinstance(element, Tag)
    walk(element)
    flush()
    return paragraphs


def _parse_html(path: Path) -> object:
    import warnings

    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    # The handbook is XHTML; parsing it as HTML is what we want (same text, lenient parser).
    warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)
    try:
        import lxml  # noqa: F401  # faster parser when present

        parser = "lxml"
    except ImportError:
        parser = "html.parser"
    return BeautifulSoup(path.read_bytes(), parser, from_encoding="utf-8")


def handbook_html_to_text(path: Path) -> str:
    """Visible text of a Debian Administrator's Handbook page, without navigation or anchors."""
    soup = _parse_html(path)
    body = soup.body  # type: ignore[attr-defined]
    if body is None:
        return ""
    for selector in ("#banner", "p#title", "ul.docnav", "a.indexterm", "div.mobile-nav"):
        for node in body.select(selector):
            node.decompose()
    return "\n\n".join(_html_paragraphs(body)) + "\n"


def python_html_to_text(path: Path) -> str:
    """Visible text of the main column of a Sphinx page from the Python documentation."""
    soup = _parse_html(path)
    main = soup.select_one('div[role="main"]') or soup.body  # type: ignore[attr-defined]
    if main is None:
        return ""
    for selector in ("a.headerlink", "div.highlight-pycon3 span.gp"):
        for node in main.select(selector):
            node.decompose()
    return "\n\n".join(_html_paragraphs(main)) + "\n"


# ---------------------------------------------------------------------------------------------
# Building the corpus
# ---------------------------------------------------------------------------------------------


def _sorted_files(root: Path, pattern: str, skip: Callable[[Path], bool]) -> tuple[Path, ...]:
    if not root.is_dir():
        return ()
    return tuple(
        sorted(
            path
            for path in root.rglob(pattern)
            if path.is_file() and not path.is_symlink() and not skip(path)
        )
    )


def discover_sources(root: Path, lang: str) -> list[Source]:
    """List every source group for `lang` ("zh", "en" or "both") under the unpacked `root`."""
    sources: list[Source] = []
    if lang in {"zh", "both"}:
        man = _man_renderer()
        for variant in ("zh_CN", "zh_TW"):
            man_root = root / MAN_DIR / variant
            files = _sorted_files(man_root, "*.gz", lambda p: False)
            sources.append(Source("zh", f"man-{variant}", man_root, files, man, ".gz"))
        for variant in ("zh-CN", "zh-TW"):
            html_root = root / HANDBOOK_DIR / variant
            files = _sorted_files(
                html_root,
                "*.html",
                lambda p, r=html_root: p.name in _HANDBOOK_SKIP or p.parent != r,  # type: ignore[misc]
            )
            sources.append(
                Source(
                    "zh", f"handbook-{variant}", html_root, files, handbook_html_to_text, ".html"
                )
            )
    if lang in {"en", "both"}:
        html_root = root / HANDBOOK_DIR / "en-US"
        files = _sorted_files(
            html_root,
            "*.html",
            lambda p, r=html_root: p.name in _HANDBOOK_SKIP or p.parent != r,  # type: ignore[misc]
        )
        sources.append(
            Source("en", "handbook-en-US", html_root, files, handbook_html_to_text, ".html")
        )
        py_root = root / PYTHON_DIR
        files = _sorted_files(
            py_root,
            "*.html",
            lambda p, r=py_root: (
                p.relative_to(r).parts[0].startswith("_")  # type: ignore[misc]
                or (bool(_PYTHON_SKIP.match(p.name)) and p.parent == r)
            ),
        )
        sources.append(Source("en", "python-3.11", py_root, files, python_html_to_text, ".html"))
    return sources


def _output_path(out: Path, source: Source, path: Path) -> Path:
    relative = path.relative_to(source.root)
    name = (
        relative.name[: -len(source.suffix)]
        if relative.name.endswith(source.suffix)
        else (relative.name)
    )
    return out / source.lang / source.name / relative.parent / f"{name}.txt"


def _write_if_changed(path: Path, text: str) -> bool:
    data = text.encode("utf-8")
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)
    return True


def build(
    out: Path, root: Path, lang: str, max_docs: int | None, workers: int
) -> dict[str, object]:
    """Convert every source document to text under `out`; return the manifest that was written.

    Args:
        out: Output directory (created if needed).
        root: Directory the .deb files were unpacked into with `dpkg -x`.
        lang: "zh", "en" or "both".
        max_docs: Keep only the first N documents (sorted by path) of each source group.
        workers: Parallel conversions (groff is a subprocess, so threads suffice).

    Returns:
        The manifest: per source group, files and bytes written, plus totals per language.
    """
    sources = discover_sources(root, lang)
    written: set[Path] = set()
    groups: dict[str, dict[str, object]] = {}
    for source in sources:
        files = source.files[:max_docs] if max_docs else source.files
        with ThreadPoolExecutor(max_workers=workers) as pool:
            texts = list(pool.map(source.convert, files))
        count = size = changed = 0
        for path, text in zip(files, texts, strict=True):
            if not text.strip():
                continue
            target = _output_path(out, source, path)
            changed += _write_if_changed(target, text)
            written.add(target)
            count += 1
            size += len(text.encode("utf-8"))
        groups[f"{source.lang}/{source.name}"] = {
            "source": str(source.root),
            "files": count,
            "bytes": size,
        }
        print(
            f"{source.lang}/{source.name}: {count} files, {size / 1e6:.1f} MB ({changed} changed)",
            file=sys.stderr,
        )

    # Remove pages a previous run wrote that this run did not (another --max-docs or --lang).
    removed = 0
    for language_dir in (out / "zh", out / "en"):
        if not language_dir.is_dir():
            continue
        for stale in language_dir.rglob("*.txt"):
            if stale not in written:
                stale.unlink()
                removed += 1
    totals: dict[str, dict[str, int]] = {}
    for key, group in groups.items():
        language = key.split("/", 1)[0]
        total = totals.setdefault(language, {"files": 0, "bytes": 0})
        total["files"] += int(group["files"])  # type: ignore[call-overload]
        total["bytes"] += int(group["bytes"])  # type: ignore[call-overload]
    manifest: dict[str, object] = {
        "packages": list(PACKAGES),
        "root": str(root),
        "lang": lang,
        "max_docs": max_docs,
        "man_renderer": "groff" if shutil.which("groff") else "fallback",
        "groups": groups,
        "totals": totals,
    }
    _write_if_changed(out / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
    if removed:
        print(f"removed {removed} stale files", file=sys.stderr)
    return manifest


def iter_documents(out: Path, lang: str = "both") -> Iterator[tuple[Path, str]]:
    """Yield (path, text) for every document of a built corpus, in sorted order."""
    languages = ("zh", "en") if lang == "both" else (lang,)
    for language in languages:
        for path in sorted((out / language).rglob("*.txt")):
            yield path, path.read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--lang", choices=("zh", "en", "both"), default="both")
    parser.add_argument(
        "--max-docs",
        type=int,
        default=None,
        help="at most N documents per source group (first N by path)",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=DEFAULT_ROOT,
        help=f"where the packages are unpacked (default {DEFAULT_ROOT})",
    )
    parser.add_argument(
        "--debs",
        type=Path,
        default=DEFAULT_DEBS,
        help=f"where the .deb files are downloaded (default {DEFAULT_DEBS})",
    )
    parser.add_argument(
        "--fetch",
        action="store_true",
        help="run apt-get download + dpkg -x first (needs apt sources)",
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    try:
        if args.fetch:
            fetch(args.debs, args.root)
        _check_unpacked(args.root, args.debs)
        manifest = build(args.out, args.root, args.lang, args.max_docs, args.workers)
    except (CorpusError, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for language, total in manifest["totals"].items():  # type: ignore[attr-defined]
        print(f"{language}: {total['files']} files, {total['bytes'] / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
