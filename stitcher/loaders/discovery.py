"""Which files an ingest run reads, under which stable document ids."""

from __future__ import annotations

import errno
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISBLK, S_ISCHR, S_ISDIR, S_ISFIFO, S_ISREG, S_ISSOCK
from typing import IO

from stitcher.errors import LoadError, setting
from stitcher.loaders import sniff
from stitcher.loaders.compressed import compression_of
from stitcher.loaders.metadata import SIDECAR_SUFFIX
from stitcher.loaders.readers import READERS

#: File extensions that could be loaded when this module was imported (lowercase, with the
#: dot); `supported_extensions()` is the live list.
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(sorted(READERS))

#: Folders nested deeper than this below a directory argument are not walked (one error each):
#: real document trees are a few levels deep, and a deeper one is a loop of bind mounts or a
#: generated trap whose paths soon exceed what the system can open.
MAX_DEPTH = 100

#: Why a file found under a directory was not loaded (`SkippedFile.reason`); the others are
#: decided by what the file is (`stitcher.loaders.sniff`).
NOT_SUPPORTED = sniff.NOT_SUPPORTED
BINARY = sniff.BINARY
NOT_A_DOCUMENT = sniff.NOT_A_DOCUMENT
TOO_LARGE = sniff.TOO_LARGE
NOT_A_REGULAR_FILE = "not a regular file"
#: `SkippedFile.kind` of a file without an extension.
NO_EXTENSION = sniff.NO_EXTENSION


def supported_extensions() -> tuple[str, ...]:
    """The file extensions a reader is registered for (stitcher.loaders.formats.READERS)."""
    return tuple(sorted(READERS))


@dataclass(frozen=True)
class SourceFile:
    """A file to load: its path, its document id, and its path as given by the user or found.

    `read_as` is the extension whose reader reads it, when its own does not say (a "README" is
    read as ".txt"); empty: its own extension, after a compression suffix ("bash.1.gz": ".1").
    """

    path: Path
    doc_id: str
    source: str
    read_as: str = ""

    @property
    def compression(self) -> str:
        """Its compression suffix (".gz", ".bz2", ".xz"), or "" if it is not compressed."""
        return compression_of(self.path.name)

    @property
    def kind(self) -> str:
        """The key of the reader in READERS that reads this file."""
        if self.read_as:
            return self.read_as
        name = self.path.name
        return _extension(name[: len(name) - len(self.compression)])


@dataclass(frozen=True)
class SkippedFile:
    """A file found under a directory argument and not loaded.

    Attributes:
        path: The file.
        source: Its path as found (as `SourceFile.source`).
        kind: Its extension (".rst"), `NO_EXTENSION`, or what it is ("fifo", "socket", "device").
        reason: Why it was not loaded: NOT_SUPPORTED, BINARY, NOT_A_DOCUMENT, TOO_LARGE or
            NOT_A_REGULAR_FILE.
    """

    path: Path
    source: str
    kind: str
    reason: str


def describe_skipped(skipped: Iterable[SkippedFile]) -> str:
    """The skipped files counted by reason and kind, most common first:
    "2 .rst, 1 .org (not a supported type), 1 without extension (binary)"."""
    by_reason: dict[str, Counter[str]] = {}
    for item in skipped:
        by_reason.setdefault(item.reason, Counter())[item.kind] += 1
    parts = []
    for reason, kinds in sorted(by_reason.items(), key=lambda pair: (-pair[1].total(), pair[0])):
        ordered = sorted(kinds.items(), key=lambda pair: (-pair[1], pair[0]))
        parts.append(", ".join(f"{count} {kind}" for kind, count in ordered) + f" ({reason})")
    return ", ".join(parts)


@dataclass
class Discovery:
    """The outcome of `discover`.

    Attributes:
        files: Files to load, sorted by doc_id.
        errors: One LoadError per named input (or entry found under it) that could not be used.
        roots: Document-id prefixes this run covers: a directory root "samples" covers every
            doc_id under "samples/", a file root covers its own doc_id.
        skipped: Files found while walking directories and not loaded (unsupported extension,
            no extension, not a regular file), sorted by path. Hidden entries, "*.meta.json"
            sidecars and files the glob leaves out are not among them: those are not inputs.
        glob: The --glob filter that was applied under directories, if any.
        folders: The absolute path of each directory root, by its source name (the root's
            document-id prefix): what a collection registers per source.
    """

    files: list[SourceFile] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    glob: str | None = None
    folders: dict[str, str] = field(default_factory=dict)

    def root_of(self, doc_id: str) -> str | None:
        """The root (source) whose listing covers `doc_id`, i.e. where --prune may remove it,
        or None.

        A doc_id under a directory root must also match the glob, so `--glob "*.md" --prune`
        leaves the other stored documents of that directory alone.
        """
        matcher = compile_glob(self.glob) if self.glob else None
        for root in self.roots:
            if doc_id == root:
                return root
            if doc_id.startswith(root + "/"):
                if matcher is None or matcher(doc_id[len(root) + 1 :]):
                    return root
                return None
        return None


def discover(
    paths: Sequence[str],
    *,
    glob: str | None = None,
    stdin: IO[str] | None = None,
    source: str | None = None,
) -> Discovery:
    """Find the files to load under `paths`.

    A directory is walked depth-first in sorted order, at most MAX_DEPTH levels down (a deeper
    folder is an error); hidden entries (names starting with ".") and "*.meta.json" sidecars are
    ignored, and `glob` (if given) keeps only matching files. A file with a supported extension
    is loaded; one without an extension is read as plain text when its name is a document's by
    convention (README, LICENSE, NEWS: `sniff.DOCUMENT_NAMES`) and it starts like text; every
    other file is in `skipped`, with the reason. A directory holding files of which none can be
    loaded is an error naming their types. Symlinks are followed, except into a directory that
    is already being walked (a loop: reported as an error). A file reached twice (e.g. named
    alone and also inside a named directory) is kept once, under its first doc_id. A file named
    as an argument without an extension is read as plain text if it is text, whatever its name.

    Document ids do not depend on the current directory or the machine: a file found under a
    directory argument gets "<source>/<path relative to it>", where the source is `source` or
    else the directory's name ("samples/zh/a.txt" for both `./samples` and `/abs/samples`); a
    file argument gets "<source>/<file name>", or its file name alone without `source`. "-"
    reads more paths from `stdin`, one per line.

    Args:
        paths: Files and directories as the user gave them.
        glob: Pattern for files under directories, e.g. "**/*.md" (see `compile_glob`).
        stdin: Where "-" reads paths from; sys.stdin when None.
        source: The source name every document id starts with (`stitcher ingest --source`);
            must not contain "/".

    Returns:
        Files to load (sorted by doc_id), errors, roots, skipped files.
    """
    walker = _Walker(Discovery(glob=glob), compile_glob(glob) if glob else None, source)
    stdin_read = False
    for arg in paths:
        if arg == "-":
            if stdin_read:
                continue
            stdin_read = True
            stream = stdin if stdin is not None else sys.stdin
            for line in stream:
                listed = line.rstrip("\r\n")
                if listed.strip():
                    walker.add_named(listed)
        else:
            walker.add_named(arg)
    result = walker.result
    result.files.sort(key=lambda f: f.doc_id)
    result.skipped.sort(key=lambda skipped: skipped.path)
    return result


def default_source_name(folder: str) -> str:
    """The source a folder's documents belong to without --source: the folder's own name.

    It depends neither on the current directory nor on the machine, so a cron job on another
    host ingesting the same path keeps the same document ids.
    """
    return os.path.basename(os.path.abspath(folder)) or "root"


def compile_glob(pattern: str) -> _GlobMatcher:
    """A predicate for paths relative to a directory argument, with "/" separators.

    "**/" matches any number of directories (including none), "*" anything but "/", "?" one
    character, "[...]" a character class. A pattern without "/" is matched against the file name
    alone, so "*.md" finds Markdown files at any depth.
    """
    regex = re.compile(_glob_to_regex(pattern))
    if "/" in pattern:
        return _GlobMatcher(regex, whole_path=True)
    return _GlobMatcher(regex, whole_path=False)


@dataclass(frozen=True)
class _GlobMatcher:
    regex: re.Pattern[str]
    whole_path: bool

    def __call__(self, relative: str) -> bool:
        target = relative if self.whole_path else relative.rsplit("/", 1)[-1]
        return self.regex.fullmatch(target) is not None


def _glob_to_regex(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


class _Walker:
    def __init__(self, result: Discovery, glob: _GlobMatcher | None, source: str | None) -> None:
        self.result = result
        self.glob = glob
        self.source = source
        self.by_doc_id: dict[str, SourceFile] = {}
        self.seen_files: set[tuple[int, int]] = set()
        self.dir_roots: dict[str, tuple[str, tuple[int, int]]] = {}

    def add_named(self, arg: str) -> None:
        stat = self._stat_named(arg)
        if stat is None:
            return
        if S_ISDIR(stat.st_mode):
            self._add_root_dir(arg, (stat.st_dev, stat.st_ino))
        elif S_ISREG(stat.st_mode):
            name = os.path.basename(os.path.normpath(arg))
            # named by the user: text without an extension is reason enough
            verdict = sniff.classify(Path(arg), READERS, named=True)
            if not verdict.reader:
                self._error(f"{arg}: {_refusal(verdict)}")
                return
            doc_id = f"{self.source}/{name}" if self.source else name
            root = self.source or name
            if root not in self.result.roots:
                self.result.roots.append(root)
            self._add_file(Path(arg), doc_id, arg, (stat.st_dev, stat.st_ino), verdict.reader)
        else:
            self._error(f"{arg}: not a regular file or directory")

    def _stat_named(self, arg: str) -> os.stat_result | None:
        try:
            return os.stat(arg)
        except OSError as exc:
            self._error(_describe_stat_error(arg, exc))
            return None

    def _add_root_dir(self, arg: str, key: tuple[int, int]) -> None:
        name = self.source or default_source_name(arg)
        previous = self.dir_roots.get(name)
        if previous is not None:
            if previous[1] != key:
                self._error(
                    f"{arg}: its documents would get the same ids as those of {previous[0]} "
                    f"(both directories are named {name!r}); ingest them separately, each with "
                    f"its own {setting('source')}"
                )
            return
        self.dir_roots[name] = (arg, key)
        self.result.folders[name] = os.path.abspath(arg)
        if name not in self.result.roots:
            self.result.roots.append(name)
        files_before, skipped_before = len(self.result.files), len(self.result.skipped)
        self._walk(arg, name, key)
        skipped = self.result.skipped[skipped_before:]
        if skipped and len(self.result.files) == files_before:
            self._error(
                f"{arg}: none of its files can be loaded: {describe_skipped(skipped)}; "
                f"supported: {', '.join(supported_extensions())}"
            )

    def _walk(self, top: str, root: str, top_key: tuple[int, int]) -> None:
        # A stack of listings instead of recursion: a folder nested a thousand levels deep must
        # be one error, not a RecursionError that ends the whole run.
        stack: list[tuple[Iterator[os.DirEntry[str]], str, tuple[int, int]]] = []
        walking: set[tuple[int, int]] = set()  # the folders on the stack: a symlink to one loops

        def enter(directory: str, prefix: str, key: tuple[int, int]) -> None:
            entries = self._list(directory)
            if entries is not None:
                stack.append((iter(entries), prefix, key))
                walking.add(key)

        enter(top, "", top_key)
        while stack:
            entries, prefix, folder_key = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                walking.discard(folder_key)
                continue
            if entry.name.startswith("."):
                continue
            relative = prefix + entry.name
            try:
                stat = entry.stat()
            except OSError as exc:
                self._error(_describe_stat_error(entry.path, exc))
                continue
            key = (stat.st_dev, stat.st_ino)
            if S_ISDIR(stat.st_mode):
                if key in walking:
                    self._error(
                        f"{entry.path}: symlink loop (leads back to a directory above it); skipped"
                    )
                elif len(stack) > MAX_DEPTH:
                    self._error(
                        f"{entry.path}: folder nested more than {MAX_DEPTH} levels below {top}; "
                        "not read, nor anything in it"
                    )
                else:
                    enter(entry.path, relative + "/", key)
            elif S_ISREG(stat.st_mode):
                self._consider_file(entry.path, root, relative, key)
            elif self.glob is None or self.glob(relative):
                self._skip(entry.path, _special_kind(stat.st_mode), NOT_A_REGULAR_FILE)

    def _list(self, directory: str) -> list[os.DirEntry[str]] | None:
        try:
            with os.scandir(directory) as scan:
                return sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            self._error(f"{directory}: cannot list the directory ({exc.strerror or exc})")
            return None

    def _consider_file(self, path: str, root: str, relative: str, key: tuple[int, int]) -> None:
        name = relative.rsplit("/", 1)[-1]
        if name.lower().endswith(SIDECAR_SUFFIX):
            return
        if self.glob is not None and not self.glob(relative):
            return
        verdict = sniff.classify(Path(path), READERS)
        if verdict.reader:
            self._add_file(Path(path), f"{root}/{relative}", path, key, verdict.reader)
        else:
            self._skip(path, verdict.kind, verdict.reason)

    def _skip(self, path: str, kind: str, reason: str) -> None:
        self.result.skipped.append(SkippedFile(Path(path), path, kind, reason))

    def _add_file(
        self, path: Path, doc_id: str, source: str, key: tuple[int, int], read_as: str = ""
    ) -> None:
        if key in self.seen_files:
            return
        existing = self.by_doc_id.get(doc_id)
        if existing is not None:
            self._error(
                f"{source}: would get the same document id {doc_id!r} as {existing.source}; "
                "rename one or ingest them separately"
            )
            return
        self.seen_files.add(key)
        found = SourceFile(path=path, doc_id=doc_id, source=source)
        if read_as != found.kind:
            found = SourceFile(path=path, doc_id=doc_id, source=source, read_as=read_as)
        self.by_doc_id[doc_id] = found
        self.result.files.append(found)

    def _error(self, message: str) -> None:
        self.result.errors.append(LoadError(message))


def _refusal(verdict: sniff.Verdict) -> str:
    """Why a file named by the user is not loaded, and what can be."""
    if verdict.reason == TOO_LARGE:
        return f"{TOO_LARGE}; not loaded (a guard against decompression bombs)"
    binary = verdict.reason == BINARY
    what = "binary file" if binary else f"unsupported file type {verdict.kind!r}"
    return (
        f"{what}; text or a file of a supported type can be loaded: "
        f"{', '.join(supported_extensions())}"
    )


def _extension(name: str) -> str:
    _, dot, ext = name.rpartition(".")
    return "." + ext.lower() if dot and _ else ""


def _special_kind(mode: int) -> str:
    if S_ISFIFO(mode):
        return "fifo"
    if S_ISSOCK(mode):
        return "socket"
    if S_ISBLK(mode) or S_ISCHR(mode):
        return "device"
    return "special file"


def _describe_stat_error(path: str, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return f"{path}: symlink loop; fix or remove the link"
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return f"{path}: broken symlink (points to {os.readlink(path)!r}, which does not exist)"
        return f"{path}: no such file or directory"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"{path}: permission denied"
    return f"{path}: cannot read ({exc.strerror or exc})"
