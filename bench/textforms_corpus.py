"""Corpora of the text-forms benchmark: real Debian documentation in the forms it ships in.

Everything is built under the cache directory (STITCHER_BENCH_CACHE, else /tmp/stitcher-textforms):

    CACHE/debs/*.deb           apt-get download (apt-get update first if a download fails)
    CACHE/root/...             dpkg -x of every .deb (nothing is installed)
    CACHE/forms/FORM/LANG/...  the files one form's collection is built from

Forms (FORM/LANG), each cut to about `budget` characters with a fixed seed:

    docbook/en, docbook/zh  the packaged plain-text manuals (debian-faq, debian-reference,
                            maint-guide; zh-cn variants): wrapped at ~75 columns, body indented;
                            a contiguous excerpt of each manual, cut at blank lines
    man/en, man/zh          man pages rendered by `MANWIDTH=80 man -P cat -l FILE` (English from
                            this machine's /usr/share/man, Chinese from manpages-zh), as .txt
    info/en                 GNU info manuals (/usr/share/info/*.info*.gz) decompressed and named
                            .txt: stitcher has no .info reader, a .txt is what a user would ingest
    licence/en              /usr/share/common-licenses/* (symlinks skipped), as .txt
    pdf/en, pdf/zh          maint-guide's packaged PDF (en, zh-cn), a contiguous page range
                            rewritten with pypdf
    html/en, html/zh        maint-guide's HTML pages read as HTML: the prose control (the
                            browser/loader joins lines, there is no hard wrap to undo)

A form whose packages cannot be fetched or whose files are missing raises FormError; the caller
reports it and goes on with the other forms.
"""

from __future__ import annotations

import functools
import gzip
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import textforms_containers as containers

PACKAGES = (
    "debian-faq",
    "debian-faq-zh-cn",
    "debian-reference-common",
    "debian-reference-en",
    "debian-reference-zh-cn",
    "maint-guide",
    "maint-guide-zh-cn",
    "manpages-zh",
    *containers.PACKAGES,
)

#: (form, lang) in report order.
FORMS = (
    ("docbook", "en"),
    ("docbook", "zh"),
    ("man", "en"),
    ("man", "zh"),
    ("info", "en"),
    ("licence", "en"),
    ("pdf", "en"),
    ("pdf", "zh"),
    ("html", "en"),
    ("html", "zh"),
    *containers.FORMS,  # epub, mail, odt, rtf: see textforms_containers
)


#: Builders of forms defined in other modules (see the end of this file).
EXTRA_BUILDERS: dict[
    str, Callable[[str, Path, Path, int, random.Random], tuple[list[str], str]]
] = {}


class FormError(Exception):
    """One form could not be built (missing package, file or tool)."""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def default_cache() -> Path:
    return Path(os.environ.get("STITCHER_BENCH_CACHE") or "/tmp/stitcher-textforms")


# ---------------------------------------------------------------------------------------------
# Fetching
# ---------------------------------------------------------------------------------------------


def fetch_packages(cache: Path) -> dict[str, str]:
    """Download and unpack the packages that are not there yet; {package: error} for failures.

    One `apt-get download` for all; when it fails, `apt-get update` once and then one package at
    a time, so one missing package costs only the forms that need it.
    """
    debs = cache / "debs"
    root = cache / "root"
    debs.mkdir(parents=True, exist_ok=True)
    root.mkdir(parents=True, exist_ok=True)

    def have(package: str) -> bool:
        return any(debs.glob(f"{package}_*.deb"))

    missing = [p for p in PACKAGES if not have(p)]
    errors: dict[str, str] = {}
    if missing:
        log(f"apt-get download {' '.join(missing)}")
        if _run(["apt-get", "download", *missing], debs) != 0:
            log("download failed; apt-get update, then one package at a time")
            _run(["apt-get", "update"], debs)
            for package in missing:
                if not have(package) and _run(["apt-get", "download", package], debs) != 0:
                    errors[package] = "apt-get download failed"
    for deb in sorted(debs.glob("*.deb")):
        stamp = root / ".unpacked" / deb.name
        if stamp.exists():
            continue
        if _run(["dpkg", "-x", str(deb), str(root)], debs) != 0:
            errors[deb.name.split("_", 1)[0]] = "dpkg -x failed"
            continue
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    return errors


def _run(command: list[str], cwd: Path) -> int:
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as error:
        log(f"{command[0]}: {error}")
        return 127
    if done.returncode != 0:
        log(f"{' '.join(command[:3])}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    return done.returncode


# ---------------------------------------------------------------------------------------------
# Building one form
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuiltForm:
    """A form's files on disk (below `directory`) and where they came from."""

    form: str
    lang: str
    directory: Path
    files: tuple[Path, ...]
    sources: tuple[str, ...]
    note: str = ""


def build_form(form: str, lang: str, cache: Path, budget: int, seed: int) -> BuiltForm:
    """Write one form's files under CACHE/forms/FORM/LANG (replacing what was there)."""
    builders: dict[str, Callable[[str, Path, Path, int, random.Random], tuple[list[str], str]]] = {
        "docbook": _build_docbook,
        "man": _build_man,
        "info": _build_info,
        "licence": _build_licence,
        "pdf": _build_pdf,
        "html": _build_html,
        **EXTRA_BUILDERS,
        **{name: functools.partial(containers.build, name) for name, _ in containers.FORMS},
        **TAB_MAN_BUILDERS,
    }
    out = cache / "forms" / form / lang
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rng = random.Random(f"{seed}/{form}/{lang}")
    budget = budget * ZH_BUDGET_FACTOR if lang == "zh" else budget
    sources, note = builders[form](lang, cache / "root", out, budget, rng)
    if form in DENSE_FORMS:
        note += "; " + keep_densest(out, budget, form, lang)
    files = tuple(sorted(p for p in out.rglob("*") if p.is_file()))
    if not files:
        raise FormError(f"{form}/{lang}: no files were built")
    return BuiltForm(form, lang, out, files, tuple(sources), note)


#: Chinese cases are rarer per character (short paragraphs): twice the characters.
ZH_BUDGET_FACTOR = 2

#: Forms whose candidate files are cut down to the ones richest in cases (see keep_densest).
DENSE_FORMS = frozenset({"docbook", "man", "info", "html"}) | containers.DENSE
WINDOW = 8_000


def keep_densest(out: Path, budget: int, form: str, lang: str) -> str:
    """Keep the candidate files with the most cut sentences per character, up to `budget`.

    The seed's splitter prefers paragraph breaks, so it cuts sentences only inside paragraphs
    longer than a chunk; in Chinese (short paragraphs) a random excerpt yields few cases. Picking
    the densest pieces keeps each form within its embedding budget and still gives ~100 cases.
    """
    import textforms_cases as cases

    scored = []
    for path in sorted(out.iterdir()):
        found, _words = cases.cut_sentences(path, path.name, form, lang)
        size = len(cases.raw_text(path))
        scored.append((-len(found) / max(size, 1), path.name, path, size))
    scored.sort()
    total = kept = 0
    for _density, _name, path, size in scored:
        if total < budget:
            total += size
            kept += 1
        else:
            path.unlink()
    return f"kept the {kept} of {len(scored)} candidates densest in cut sentences"


def windows(text: str, size: int = WINDOW) -> list[str]:
    """The text in consecutive pieces of about `size` characters, cut at blank lines."""
    pieces = []
    start = 0
    while start < len(text):
        end = text.rfind("\n\n", start, start + size) if start + size < len(text) else len(text)
        end = end if end > start else min(len(text), start + size)
        pieces.append(text[start:end].strip("\n") + "\n")
        start = end
    return [p for p in pieces if p.strip()]


def _require(path: Path) -> Path:
    if not path.exists():
        raise FormError(f"{path} is missing (package not downloaded?)")
    return path


def _read_maybe_gz(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n")


_DOCBOOK = {
    "en": (
        "usr/share/doc/debian/FAQ/debian-faq.en.txt.gz",
        "usr/share/debian-reference/debian-reference.en.txt.gz",
        "usr/share/doc/maint-guide/maint-guide.en.txt.gz",
    ),
    "zh": (
        "usr/share/doc/debian/FAQ/debian-faq.zh-cn.txt.gz",
        "usr/share/debian-reference/debian-reference.zh-cn.txt.gz",
        "usr/share/doc/maint-guide-zh-cn/maint-guide.zh-cn.txt.gz",
    ),
}


def _build_docbook(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    sources = list(_DOCBOOK[lang])
    for relative in sources:
        text = _read_maybe_gz(_require(root / relative))
        name = Path(relative).name.removesuffix(".gz").removesuffix(".txt")
        for number, piece in enumerate(windows(text)):
            (out / f"{name}.part{number:03d}.txt").write_text(piece)
    return sources, f"the manuals in pieces of ~{WINDOW} characters cut at blank lines"


def render_man(path: Path) -> str:
    """`MANWIDTH=80 man -P cat -l FILE` in a UTF-8 locale (man-db strips the overstrikes)."""
    env = {**os.environ, "MANWIDTH": "80", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.pop("MANPAGER", None)
    done = subprocess.run(
        ["man", "-P", "cat", "-l", str(path)],
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
    )
    text = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0 or not text.strip():
        raise FormError(f"man failed on {path}: {done.stderr.decode(errors='replace')[:200]}")
    return text


def _build_man(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    if not shutil.which("man"):
        raise FormError("man is not installed")
    base = Path("/usr/share/man") if lang == "en" else _require(root / "usr/share/man/zh_CN")
    pages = sorted(
        p
        for section in ("man1", "man5", "man8")
        for p in (base / section).glob("*.gz")
        if p.is_file() and not p.is_symlink()
    )
    rng.shuffle(pages)
    total = 0
    used: list[str] = []
    for page in pages:
        if total >= 2 * budget:
            break
        rendered = (
            out.parent.parent.parent / "man-rendered" / lang / f"{page.parent.name}-{page.name}.txt"
        )
        try:
            if rendered.exists():
                text = rendered.read_text(encoding="utf-8")
            else:
                text = render_man(page)
                rendered.parent.mkdir(parents=True, exist_ok=True)
                rendered.write_text(text, encoding="utf-8")
        except (FormError, subprocess.TimeoutExpired):
            continue
        if text.lstrip().startswith(".so") or len(text) > budget // 4 or len(text) < 1500:
            continue  # links, pages that would take over the form, stubs
        (out / f"{page.parent.name}-{page.name.removesuffix('.gz')}.txt").write_text(text)
        used.append(str(page))
        total += len(text)
    return used, f"{len(used)} random pages (fixed seed) of 1.5k-{budget // 4} characters"


def _build_info(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    manuals = sorted(Path("/usr/share/info").glob("*.info*.gz"))
    if not manuals:
        raise FormError("no /usr/share/info/*.info*.gz on this machine")
    used: list[str] = []
    for manual in manuals:
        name = manual.name.removesuffix(".gz")
        for number, piece in enumerate(windows(_read_maybe_gz(manual))):
            (out / f"{name}.part{number:03d}.txt").write_text(piece)
        used.append(str(manual))
    return used, (
        f"decompressed .info files renamed .txt (no .info reader), in pieces of ~{WINDOW} "
        "characters"
    )


def _build_licence(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    licences = sorted(
        p
        for p in Path("/usr/share/common-licenses").iterdir()
        if p.is_file() and not p.is_symlink()
    )
    if not licences:
        raise FormError("no /usr/share/common-licenses")
    rng.shuffle(licences)
    total = 0
    used: list[str] = []
    for licence in licences:
        if total >= budget:
            break
        text = _read_maybe_gz(licence)
        (out / f"{licence.name}.txt").write_text(text)
        used.append(str(licence))
        total += len(text)
    return used, f"{len(used)} whole licence texts"


_PDF = {
    "en": "usr/share/doc/maint-guide/maint-guide.en.pdf",
    "zh": "usr/share/doc/maint-guide-zh-cn/maint-guide.zh-cn.pdf",
}


def _build_pdf(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    from pypdf import PdfReader, PdfWriter

    source = _require(root / _PDF[lang])
    reader = PdfReader(str(source))
    lengths = [len(page.extract_text() or "") for page in reader.pages]
    # Skip the title page and table of contents; then a contiguous range of about `budget`.
    first = min(8, len(lengths) - 1)
    first += rng.randrange(0, max(1, len(lengths) // 4))
    last, total = first, 0
    while last < len(lengths) and total < budget:
        total += lengths[last]
        last += 1
    writer = PdfWriter()
    for number in range(first, last):
        writer.add_page(reader.pages[number])
    with open(out / f"{source.stem}.p{first + 1}-{last}.pdf", "wb") as handle:
        writer.write(handle)
    return [str(source)], f"pages {first + 1}-{last} of {len(lengths)}"


_HTML = {
    "en": (
        "usr/share/doc/maint-guide/html",
        "usr/share/doc/debian/FAQ",
        "usr/share/debian-reference",
    ),
    "zh": (
        "usr/share/doc/maint-guide-zh-cn/html",
        "usr/share/doc/debian/FAQ/zh-cn",
        "usr/share/debian-reference",
    ),
}


def _build_html(
    lang: str, root: Path, out: Path, budget: int, rng: random.Random
) -> tuple[list[str], str]:
    pages = sorted(
        page
        for directory in _HTML[lang]
        for page in _require(root / directory).glob(f"*.{'en' if lang == 'en' else 'zh-cn'}.html")
        if not page.name.startswith("index")
    )
    used: list[str] = []
    for page in pages:
        manual = page.parent.name if page.parent.name != "zh-cn" else "FAQ"
        shutil.copyfile(page, out / f"{manual}-{page.name}")
        used.append(str(page))
    return used, "chapters of maint-guide's, debian-faq's and debian-reference's HTML"


# Issue 32: reST, AsciiDoc, Org and man page sources, built in their own module.
import textforms_markup  # noqa: E402  (it uses the helpers above)

PACKAGES += textforms_markup.PACKAGES
FORMS += textforms_markup.FORMS
EXTRA_BUILDERS.update(textforms_markup.BUILDERS)


# ---------------------------------------------------------------------------------------------
# Issue 32 item 5: man pages as `man -P cat X | col -b` writes them. col (without -x) turns runs
# of spaces into tabs, so these pages are indented, and their justified gaps widened, with tabs.
# The rewrap and sentence rules for tabs were developed on bash(1), grep(1) and tar(1); find(1)
# is held out and reported as a form of its own.
# ---------------------------------------------------------------------------------------------

TAB_MAN_PAGES = ("grep", "tar")
TAB_MAN_HELD_OUT = ("find",)
TAB_MAN_FORMS = (("mantabs", "en"), ("mantabs_heldout", "en"))


def render_man_col_b(name: str) -> str:
    """`man -P cat NAME | col -b` at 80 columns in a UTF-8 locale."""
    env = {**os.environ, "MANWIDTH": "80", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.pop("MANPAGER", None)
    page = subprocess.run(
        ["man", "-P", "cat", name], env=env, capture_output=True, check=False, timeout=60
    )
    if page.returncode != 0 or not page.stdout.strip():
        raise FormError(f"man {name} failed: {page.stderr.decode(errors='replace')[:200]}")
    done = subprocess.run(
        ["col", "-b"], input=page.stdout, env=env, capture_output=True, check=True, timeout=60
    )
    return done.stdout.decode("utf-8", errors="replace")


def _tab_man_builder(
    names: tuple[str, ...],
) -> Callable[[str, Path, Path, int, random.Random], tuple[list[str], str]]:
    def build(
        lang: str, root: Path, out: Path, budget: int, rng: random.Random
    ) -> tuple[list[str], str]:
        if not (shutil.which("man") and shutil.which("col")):
            raise FormError("man or col is not installed")
        for name in names:
            (out / f"{name}.txt").write_text(render_man_col_b(name), encoding="utf-8")
        return [f"man -P cat {name} | col -b" for name in names], "tab-indented (col -b)"

    return build


TAB_MAN_BUILDERS = {
    "mantabs": _tab_man_builder(TAB_MAN_PAGES),
    "mantabs_heldout": _tab_man_builder(TAB_MAN_HELD_OUT),
}
FORMS = FORMS + TAB_MAN_FORMS
