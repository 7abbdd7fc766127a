"""Getting the Weaviate server binary: build it once with Go, keep it in the shared cache.

Weaviate publishes no standalone Linux binary we can pin and verify offline, so the local server is
`go install`ed at the pinned tag. The build is deliberately made without `-trimpath`: the Chinese
tokenizer (gse_ch) finds its dictionaries through paths recorded at build time, inside the Go
module cache (see `gse_dictionary_dir`).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stitcher import config
from stitcher.config import WEAVIATE_VERSION
from stitcher.errors import ServerError

#: Go module that provides the server command.
WEAVIATE_MODULE = "github.com/weaviate/weaviate"
WEAVIATE_PACKAGE = f"{WEAVIATE_MODULE}/cmd/weaviate-server"

#: Weaviate's go.mod says `go 1.26`; older toolchains refuse to build it.
MINIMUM_GO = (1, 26)

#: The gse version Weaviate v1.38.x depends on; its dictionaries live in the module cache.
GSE_MODULE_DIR = "github.com/go-ego/gse@v0.80.3"

BINARY_NAME = "weaviate-server"

Progress = Callable[[str], None]

#: How many of the build log's last lines a failure shows.
TAIL_LINES = 12

#: `go install` prints one such line per module it fetches (to stderr, merged into the log).
_DOWNLOADING = re.compile(r"^go: downloading \S+ \S+")

InstallEventKind = Literal["started", "module", "copied", "finished", "failed"]


@dataclass(frozen=True)
class InstallEvent:
    """What `ensure_binary` reports while it works; the CLI draws it, the library prints nothing.

    Attributes:
        kind: "started" (a build began), "module" (one more module fetched), "copied" (an
            existing build was copied instead), "finished" (installed), "failed" (build failed;
            `tail` holds the log's last lines).
        version: The Weaviate version being installed.
        log_file: Where the full `go install` output goes (None for "copied").
        modules: Modules fetched so far (`go: downloading` lines).
        elapsed: Seconds since the build started.
        target: Where the binary is (being) installed.
        tail: The last lines of the log ("failed" only).
    """

    kind: InstallEventKind
    version: str
    log_file: Path | None = None
    modules: int = 0
    elapsed: float = 0.0
    target: Path | None = None
    tail: tuple[str, ...] = ()


InstallListener = Callable[[InstallEvent], None]


def binary_path(version: str = WEAVIATE_VERSION) -> Path:
    """Where the server binary for `version` lives.

    Args:
        version: Weaviate version without the leading "v".

    Returns:
        $STITCHER_WEAVIATE_BIN when set, else `<cache>/weaviate/<version>/weaviate-server`.
    """
    override = config.weaviate_binary_override()
    if override is not None:
        return override
    return config.cache_dir() / "weaviate" / version / BINARY_NAME


def _go_missing_error(version: str, found: str | None = None) -> ServerError:
    what = f"found {found}" if found else "no `go` on PATH"
    return ServerError(
        f"Go >= {MINIMUM_GO[0]}.{MINIMUM_GO[1]} is needed to build Weaviate {version} ({what}): "
        "install Go, or set WEAVIATE_URL to a running server "
        "(Go: https://go.dev/dl or your package manager)"
    )


def install_log_path(version: str = WEAVIATE_VERSION) -> Path:
    """Where `ensure_binary` writes the full `go install` output of a build of `version`."""
    return config.cache_dir() / "logs" / f"weaviate-{version}-install.log"


#: What a failed `go install` log says, and what to do about it (first match wins).
_DIAGNOSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"requires go >= ?[\d.]+|go\.mod requires go|toolchain not available"
            r"|invalid go version|unknown directive: toolchain"
        ),
        "the installed Go is too old for Weaviate's go.mod: install Go >= "
        f"{MINIMUM_GO[0]}.{MINIMUM_GO[1]} from https://go.dev/dl (or set GOTOOLCHAIN=auto)",
    ),
    (
        re.compile(
            r"dial tcp|no such host|connection refused|i/o timeout|TLS handshake timeout"
            r"|proxy\.golang\.org|network is unreachable|server misbehaving"
            r"|connection reset|Temporary failure in name resolution"
        ),
        "the Go module proxy could not be reached: check the network (HTTPS_PROXY for a proxy), "
        "or set GOPROXY to a reachable mirror, then run `stitcher server install` again",
    ),
    (
        re.compile(r"no space left on device"),
        "the disk is full: free space under the Go module cache (`go env GOMODCACHE`) and the "
        "build cache (`go env GOCACHE`), then run `stitcher server install` again",
    ),
)


def diagnose_build_log(lines: Sequence[str]) -> str:
    """The fix for a failed `go install`, read from its output (a generic hint when unknown)."""
    for line in reversed(lines):
        for pattern, fix in _DIAGNOSES:
            if pattern.search(line):
                return fix
    return (
        "see the log for the cause; check network access to the Go module proxy and retry "
        "`stitcher server install`"
    )


@functools.lru_cache(maxsize=1)
def _go_env() -> dict[str, str] | None:
    """`go env` values we use (one subprocess per process), or None when `go` is not installed."""
    go = shutil.which("go")
    if go is None:
        return None
    try:
        completed = subprocess.run(
            [go, "env", "GOVERSION", "GOPATH", "GOMODCACHE"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = completed.stdout.splitlines()
    if len(lines) < 3:
        return None
    return {
        "GOVERSION": lines[0].strip(),
        "GOPATH": lines[1].strip(),
        "GOMODCACHE": lines[2].strip(),
    }


def _parse_go_version(goversion: str) -> tuple[int, int] | None:
    match = re.match(r"go(\d+)\.(\d+)", goversion)
    return (int(match.group(1)), int(match.group(2))) if match else None


def go_version() -> tuple[int, int] | None:
    """The installed Go toolchain as (major, minor), or None when `go` is missing."""
    env = _go_env()
    return _parse_go_version(env["GOVERSION"]) if env else None


def gse_dictionary_dir() -> Path | None:
    """Where the gse_ch tokenizer of a locally built server reads its dictionaries.

    Returns:
        `$(go env GOMODCACHE)/github.com/go-ego/gse@v0.80.3/data`, or None when Go is missing
        or the directory does not exist (then Chinese tokenization with gse_ch will fail).
    """
    env = _go_env()
    if env is None or not env["GOMODCACHE"]:
        return None
    directory = Path(env["GOMODCACHE"]) / GSE_MODULE_DIR / "data"
    return directory if directory.is_dir() else None


def built_version(binary: Path) -> str | None:
    """The Weaviate version a Go-built binary was compiled from, via `go version -m`.

    The server has no `--version` flag; the Go build info embedded in the binary is the cheap and
    reliable record of the module version.

    Returns:
        The version without "v" (e.g. "1.38.11"), or None when unknown (no Go, not a Go binary).
    """
    go = shutil.which("go")
    if go is None or not binary.is_file():
        return None
    try:
        completed = subprocess.run(
            [go, "version", "-m", str(binary)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    for line in completed.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0] == "mod" and fields[1] == WEAVIATE_MODULE:
            return fields[2].removeprefix("v")
    return None


def _gopath_binary() -> Path | None:
    env = _go_env()
    if env is None or not env["GOPATH"]:
        return None
    # GOPATH may list several directories; `go install` writes to the first one's bin.
    first = env["GOPATH"].split(os.pathsep)[0]
    return Path(first) / "bin" / BINARY_NAME


def ensure_binary(
    progress: Progress | None = None,
    version: str = WEAVIATE_VERSION,
    *,
    events: InstallListener | None = None,
) -> Path:
    """Make sure the server binary for `version` exists and return its path.

    Safe to call repeatedly and from several processes at once: a file lock in the cache makes
    concurrent callers wait for a single build. An existing `$(go env GOPATH)/bin/weaviate-server`
    of the right version is copied instead of rebuilt. A failed build leaves nothing behind but
    its log (`install_log_path`), which holds Go's whole output.

    Args:
        progress: Called with each line of progress (Go's download and build output).
        version: Weaviate version without the leading "v".
        events: Called with an InstallEvent at the start and end of a build and for every
            module fetched: what a progress display needs, without Go's raw output.

    Returns:
        Path of the executable.

    Raises:
        ServerError: Go is missing or too old, the build failed, or $STITCHER_WEAVIATE_BIN points
            to a missing file.
    """
    # filelock pulls in asyncio (~60 ms)
    from filelock import FileLock

    report = progress or (lambda _line: None)
    notify = events or (lambda _event: None)
    override = config.weaviate_binary_override()
    if override is not None:
        if not override.is_file():
            raise ServerError(
                f"STITCHER_WEAVIATE_BIN points to {override}, which does not exist: "
                "fix the path or unset it"
            )
        return override

    target = binary_path(version)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.parent / "build.lock")):
        # Another process may have finished the build while we waited for the lock.
        if target.is_file():
            return target
        env = _go_env()
        if env is None:
            raise _go_missing_error(version)
        found = _parse_go_version(env["GOVERSION"])
        if found is None or found < MINIMUM_GO:
            raise _go_missing_error(version, env["GOVERSION"] or "an unknown version")

        gopath_binary = _gopath_binary()
        if gopath_binary is not None and built_version(gopath_binary) == version:
            report(f"Copying {gopath_binary} (Weaviate {version}, already built)")
            _copy_into_place(gopath_binary, target)
            notify(InstallEvent("copied", version, target=target))
            return target

        _build_into_place(version, target, report, notify)
        return target


def _copy_into_place(source: Path, target: Path) -> None:
    with tempfile.TemporaryDirectory(prefix=".copy-", dir=target.parent) as staging:
        staged = Path(staging) / BINARY_NAME
        shutil.copy2(source, staged)
        staged.chmod(0o755)
        os.replace(staged, target)


def _build_into_place(
    version: str, target: Path, report: Progress, notify: InstallListener
) -> None:
    go = shutil.which("go")
    if go is None:
        raise _go_missing_error(version)
    log_file = install_log_path(version)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    def event(kind: InstallEventKind, modules: int = 0, tail: Sequence[str] = ()) -> None:
        notify(
            InstallEvent(
                kind,
                version,
                log_file=log_file,
                modules=modules,
                elapsed=time.monotonic() - started,
                target=target,
                tail=tuple(tail),
            )
        )

    # Staging next to the target keeps the final rename on one filesystem (atomic).
    with (
        tempfile.TemporaryDirectory(prefix=".build-", dir=target.parent) as staging,
        log_file.open("w", encoding="utf-8") as log,
    ):
        build_env = dict(os.environ)
        build_env["GOBIN"] = staging
        build_env.pop("GOFLAGS", None)  # a stray -trimpath would break gse_ch's dictionaries
        command = [go, "install", f"{WEAVIATE_PACKAGE}@v{version}"]
        report(f"Building Weaviate {version}: {' '.join(command[1:])} (takes several minutes)")
        log.write(f"$ GOBIN={staging} {' '.join(command)}\n")
        log.flush()
        event("started")
        try:
            process = subprocess.Popen(
                command,
                env=build_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
            )
        except OSError as error:
            raise ServerError(
                f"Could not run `go install` for Weaviate {version}: {error}"
            ) from None
        tail: list[str] = []
        modules = 0
        assert process.stdout is not None
        with process.stdout:
            for raw_line in process.stdout:
                log.write(raw_line)
                line = raw_line.rstrip()
                if not line:
                    continue
                report(line)
                tail = [*tail[-(TAIL_LINES - 1) :], line]
                if _DOWNLOADING.match(line):
                    modules += 1
                    event("module", modules)
        returncode = process.wait()
        log.write(f"# exit status {returncode}\n")
        built = Path(staging) / BINARY_NAME
        if returncode != 0 or not built.is_file():
            event("failed", modules, tail)
            last = tail[-1] if tail else f"exit status {returncode}"
            raise ServerError(
                f"Building Weaviate {version} with `go install` failed ({last}): "
                f"{diagnose_build_log(tail)}; the whole log is in {log_file}"
            )
        os.replace(built, target)
    event("finished", modules)
    report(f"Weaviate {version} installed at {target}")
