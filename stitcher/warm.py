"""The warm search worker: a per-user process that keeps Stitcher sessions open between searches.

Why: a fresh `stitcher search` spends ~2 s before its first round trip (the weaviate client's
import, onnxruntime and the query model's session, connecting) and none of that can be deferred
any further, since a search needs all of it. Like dmypy or Gradle's daemon, the expensive part is
kept alive instead: the first interactive search runs in-process as always and then starts a
worker; later searches send their request over a unix socket and get the finished result back.

The contract, both sides:

- The worker only ever serves *successful* results. Anything else — no worker, a timeout, an
  error of any kind, a stale worker — makes the caller run the search in-process exactly as
  without a worker, so every message and exit code is what the normal path produces.
- Results are data, not rendered text: the caller prints them with its own code (its terminal,
  its width, its colours), so output is identical to the in-process path.
- A request carries a fingerprint of the caller's code and environment; a worker whose own
  differs answers "stale" and exits (the caller then starts a new one after its search).
- The worker exits after `idle` seconds without a request, on `stitcher server stop` / `drop`
  (`stop_worker`) and on SIGTERM. It listens on `STITCHER_HOME/warm/worker.sock` (directory 0700,
  socket 0600) and answers only its own user.

The caller's side (everything above `serve`) imports only the standard library and
stitcher.config: asking the worker must stay cheaper than what it saves. Stopping a worker
(`stop_worker`) asks stitcher.server.supervision (psutil) whether a pid is still one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import socket
import stat
import struct
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from stitcher.config import (
    ConnectionSettings,
    connection_settings,
    process_environment,
    stitcher_home,
)

# The rest of the library (the client, the query model, stitcher.api and what it pulls in) is
# imported inside the worker's functions only: the caller's side must stay cheaper to import
# than the in-process search it saves.

#: Seconds a worker waits for a request before it exits (setting `warm_idle`).
DEFAULT_IDLE = 600.0
#: How long the caller waits for the worker's answer before it searches in-process itself.
ANSWER_TIMEOUT = 60.0
#: Connecting to a live worker's socket is immediate; anything slower means no worker.
CONNECT_TIMEOUT = 1.0
#: Sessions a worker keeps open at most (each holds a client and a query model).
MAX_SESSIONS = 8
#: Size beyond which the worker log starts afresh.
MAX_LOG = 1 << 20
#: The largest request a worker reads (a query and its flags are a few kB).
MAX_REQUEST = 1 << 20

WARM_DIR = "warm"
SOCKET_FILE = "worker.sock"
PID_FILE = "worker.pid"
LOCK_FILE = "worker.lock"
LOG_FILE = "worker.log"

#: Environment that shapes what a worker computes (model cache, home, code path, proxies):
#: a worker started under other values must not answer. The warm settings themselves are left
#: out, so that `STITCHER_WARM=always` in one shell does not restart the worker of another.
_ENVIRONMENT_PREFIXES = (
    "STITCHER_",
    "HF_",
    "TRANSFORMERS_",
    "SENTENCE_TRANSFORMERS_",
    "XDG_",
    "OMP_",
    "ORT_",
)
_ENVIRONMENT_NAMES = ("HOME", "PYTHONPATH", "http_proxy", "https_proxy", "no_proxy")
_ENVIRONMENT_IGNORED = ("STITCHER_WARM", "STITCHER_WARM_IDLE", "STITCHER_TRACEBACK")


#: The worker's name in `ps` and `top`: the console script ([project.scripts] in pyproject.toml)
#: that starts it, so that a user who finds a 200 MB process can tell what it is.
PROCESS_NAME = "stitcher-warm"

#: The worker's command where that script is not installed next to the interpreter (a source
#: checkout on PYTHONPATH). Not `-m`: that would put the caller's working directory first on
#: sys.path, and a `stitcher/` folder there would be imported instead of the installed package.
_WORKER_MAIN = "import sys; del sys.path[0]; from stitcher.warm import main; main()"


def worker_command() -> list[str]:
    """The worker's argv: the `stitcher-warm` script of this interpreter's environment, run
    itself (its shebang names this interpreter) so that the kernel names the process after it."""
    script = Path(sys.executable).parent / PROCESS_NAME
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-c", _WORKER_MAIN]


def warm_dir(home: Path | None = None) -> Path:
    """The worker's directory under STITCHER_HOME."""
    return (home or stitcher_home()) / WARM_DIR


def socket_path(home: Path | None = None) -> Path:
    """Where the worker listens. A unix socket path holds at most 107 bytes: a deep home gets
    its socket in a private directory under /tmp instead, named after the home."""
    folder = warm_dir(home)
    path = folder / SOCKET_FILE
    if len(os.fsencode(path)) <= 100:
        return path
    digest = hashlib.sha256(os.fsencode(folder.resolve())).hexdigest()[:20]
    return Path("/tmp") / f"stitcher-warm-{os.getuid()}" / f"{digest}.sock"


def wanted(mode: str, *, stdin_tty: bool, stdout_tty: bool) -> bool:
    """Whether a search should use (and start) the worker: `auto` only at a terminal, so that a
    cron job or a script never leaves a process behind."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    return stdin_tty or stdout_tty


def fingerprint() -> str:
    """The caller's code and environment: stitcher's version, the interpreter, every module file
    of the package (path, size, mtime) and the environment that shapes a search."""
    from importlib.metadata import PackageNotFoundError, version  # ~20 ms, caller pays it once

    digest = hashlib.sha256()
    with contextlib.suppress(PackageNotFoundError):
        digest.update(version("stitcher").encode())
    digest.update(sys.executable.encode())
    package = Path(__file__).resolve().parent
    digest.update(str(package).encode())
    for path in sorted(package.rglob("*.py")):
        info = path.stat()
        digest.update(f"{path.relative_to(package)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    environment = process_environment(_ENVIRONMENT_PREFIXES, _ENVIRONMENT_NAMES)
    for name in sorted(environment):
        if name not in _ENVIRONMENT_IGNORED:
            digest.update(f"{name}={environment[name]}\n".encode())
    return digest.hexdigest()


# --- the caller's side ----------------------------------------------------------------------


def search_request(request: dict[str, Any], *, profile: str | None, idle: float) -> dict[str, Any]:
    """A search request as the worker reads it: `request["connection"]` (url, api_key,
    grpc_port as given) resolved here, where flags, environment and stitcher.toml are the
    caller's, and the working directory that a relative --model path is relative to.

    The rest is what defines the worker's session (`collection`, `tenant`, `consistency`), the
    search itself as `search` (stitcher.request.SearchRequest.to_wire) and `as_json`."""
    url, api_key, grpc_port = request["connection"]
    connection = connection_settings(url, api_key, grpc_port, profile=profile)
    return {**request, "connection": asdict(connection), "cwd": os.getcwd(), "idle": idle}


def ask(
    request: dict[str, Any], home: Path | None = None, *, timeout: float = ANSWER_TIMEOUT
) -> dict[str, Any] | None:
    """Send one request to the worker; its answer, or None when there is no worker or it did
    not answer properly (the caller then does the work itself)."""
    path = socket_path(home)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(str(path))
            conn.settimeout(timeout)
            conn.sendall(json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n")
            conn.shutdown(socket.SHUT_WR)
            answer = _read_all(conn)
    except (OSError, ValueError):
        return None
    try:
        data = json.loads(answer.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def search(request: dict[str, Any], home: Path | None = None) -> dict[str, Any] | None:
    """The worker's answer to a search, None when no worker answered (none runs, or it did not
    answer in time). `status` "ok" carries `notices` and `json` or `result`; "stale" means the
    worker's code or environment differs from the caller's (it exits); "fallback" that the
    search is the caller's to run (an error, a local server that is down)."""
    return ask({"op": "search", "fingerprint": fingerprint(), **request}, home)


def status(home: Path | None = None) -> dict[str, Any] | None:
    """The running worker's pid, sessions, requests served, idle exit (`idle` seconds after the
    last search) and the seconds of it left (`idle_left`); None when none answers."""
    answer = ask({"op": "status"}, home, timeout=5)
    return answer if answer is not None and answer.get("status") == "ok" else None


def summary(home: Path | None = None) -> dict[str, Any]:
    """The worker as `server status --json` and `doctor` show it: `running`, and when it runs
    its `pid`, open `sessions`, searches `served`, `idle` exit and `idle_left` seconds."""
    found = status(home)
    if found is None:
        return {"running": False}
    keys = ("pid", "sessions", "served", "idle", "idle_left")
    return {"running": True, **{key: found.get(key) for key in keys}}


def describe(summary: dict[str, Any]) -> str:
    """`summary` in one line of text: what the process is, its pid, how long it has been idle,
    and how to stop it."""
    if not summary.get("running"):
        return "not running (a search from a terminal starts it)"
    idle_left = float(summary.get("idle_left") or 0)
    idle_for = max(0.0, float(summary.get("idle") or 0) - idle_left)
    sessions = summary.get("sessions") or 0
    return (
        f"running as {PROCESS_NAME}, pid {summary.get('pid')}: idle {idle_for:.0f} s, exits after "
        f"{idle_left:.0f} s more; {sessions} open session{'s' * (sessions != 1)}, "
        f"{summary.get('served') or 0} searches served (stop it: stitcher server stop)"
    )


def stop_worker(home: Path | None = None, timeout: float = 5.0) -> bool:
    """Ask the worker to exit (SIGTERM if it does not answer); True when one was running."""
    answer = ask({"op": "stop"}, home, timeout=timeout)
    pid = _recorded_pid(home)
    if answer is None and pid is not None and _is_worker(pid):
        with contextlib.suppress(OSError):
            os.kill(pid, 15)
    deadline = time.monotonic() + timeout
    while pid is not None and _is_worker(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return answer is not None or (pid is not None and not _is_worker(pid))


def start_worker(first: dict[str, Any], *, idle: float, home: Path | None = None) -> int | None:
    """Start a worker in the background (its own session, no terminal) and return its pid.

    `first` is a search request whose session the worker opens at once, so that the next search
    already finds it warm. It travels through a pipe (it may hold an API key). A worker that
    finds another one running exits by itself.
    """
    folder = warm_dir(home)
    _private_dir(folder)
    spec = {"first": first, "idle": idle, "home": str(home or stitcher_home())}
    log = folder / LOG_FILE
    with contextlib.suppress(OSError):
        if log.stat().st_size > MAX_LOG:  # one earlier log is kept, as worker.log.1
            log.replace(log.with_name(LOG_FILE + ".1"))
    read_end, write_end = os.pipe()
    try:
        command = worker_command()
        pid = os.posix_spawn(
            command[0],
            command,
            dict(os.environ),  # the caller's, whole: the fingerprint compares what matters
            file_actions=[
                (os.POSIX_SPAWN_DUP2, read_end, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, str(log), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
            ],
            setsid=True,  # no Ctrl-C or hang-up from the terminal that started it
        )
    except OSError:
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    # A worker that died at once (broken install) leaves a broken pipe: nothing to report here.
    with contextlib.suppress(OSError), os.fdopen(write_end, "w", encoding="utf-8") as pipe:
        json.dump(spec, pipe)
    return pid


def _read_all(conn: socket.socket, limit: int = 1 << 30) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise ValueError("answer too large")


def _private_dir(folder: Path) -> None:
    """Create `folder` 0700, and refuse one that others can enter or that is not ours."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid():
        raise PermissionError(f"{folder} belongs to another user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        folder.chmod(0o700)


def _recorded_pid(home: Path | None) -> int | None:
    try:
        return int((warm_dir(home) / PID_FILE).read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _is_worker(pid: int) -> bool:
    """Whether `pid` is alive and is a stitcher worker (not a recycled pid)."""
    from stitcher.server.supervision import command_line

    return any(
        "from stitcher.warm import main" in part or Path(part).name == PROCESS_NAME
        for part in command_line(pid) or ()
    )


# --- the worker's side ----------------------------------------------------------------------


class _Worker:
    """Open sessions by what defines them, and the requests served so far."""

    def __init__(self, home: Path, idle: float) -> None:
        self.home = home
        self.idle = idle
        self.fingerprint = fingerprint()
        self.sessions: dict[str, Any] = {}
        self.notices: list[str] = []
        self.served = 0
        # Only searches keep the worker alive: `server status` and `doctor` asking how it is
        # must not postpone its exit for ever.
        self.last_search = time.monotonic()

    def idle_left(self) -> float:
        """Seconds until the worker exits unless a search comes (0 when due)."""
        return max(0.0, self.last_search + self.idle - time.monotonic())

    def log(self, message: str) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        print(f"{stamp} pid {os.getpid()}: {message}", file=sys.stderr, flush=True)

    def session(self, spec: dict[str, Any]) -> Any:
        """The open Stitcher for `spec`'s server, collection and consistency (opened once)."""
        connection = spec["connection"]
        key = _session_key(spec)
        found = self.sessions.get(key)
        if found is not None:
            return found
        if connection["url"] is None and not _local_server_running(self.home):
            # Starting the local server is the in-process path's job (with its notices).
            raise _Fallback("the local server is not running")
        from stitcher.api import Stitcher

        while len(self.sessions) >= MAX_SESSIONS:  # the least recently opened goes first
            self.drop_key(next(iter(self.sessions)))
        s = Stitcher(
            collection=spec["collection"],
            tenant=spec.get("tenant"),
            notice=self.notices.append,
            consistency=spec["consistency"],
        )
        # As the caller resolved it (flags, its environment, the stitcher.toml of its folder).
        s.connection = ConnectionSettings(**connection)
        self.sessions[key] = s
        self.log(f"opened a session for collection {s.collection}")
        return s

    def drop(self, spec: dict[str, Any]) -> None:
        self.drop_key(_session_key(spec))

    def drop_key(self, key: str) -> None:
        s = self.sessions.pop(key, None)
        if s is not None:
            with contextlib.suppress(Exception):
                s.close()

    def search(self, spec: dict[str, Any]) -> dict[str, Any]:
        from stitcher.request import SearchRequest, WireError

        try:
            request = SearchRequest.from_wire(spec.get("search"))
        except WireError as why:  # another version's caller: its own search is the right one
            raise _Fallback(str(why)) from None
        if spec.get("cwd"):
            os.chdir(spec["cwd"])  # a --model path is relative to where the user typed it
        s = self.session(spec)
        s.refresh()  # the collection may have been re-ingested or dropped since the last search
        result = s.run(request)
        explain = request.explain
        # The settings the result names stay named (not spelled as the library's parameters):
        # the caller spells them as its flags, as it does a search of its own.
        result = result.spelled(lambda text: text)
        answer: dict[str, Any] = {"status": "ok"}
        if spec["as_json"]:
            answer["json"] = json.dumps(result.to_json(explain), ensure_ascii=False, default=str)
        else:
            answer["result"] = result_to_data(result)
        return answer

    def handle(self, request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The answer to one request, and whether the worker should exit after it."""
        op = request.get("op")
        if op == "status":
            return {
                "status": "ok",
                "pid": os.getpid(),
                "served": self.served,
                "sessions": len(self.sessions),
                "idle": self.idle,
                "idle_left": round(self.idle_left(), 1),
            }, False
        if op == "stop":
            self.log("asked to stop")
            return {"status": "ok"}, True
        if op != "search":
            return {"status": "error", "reason": f"unknown request {op!r}"}, False
        self.last_search = time.monotonic()
        if request.get("fingerprint") != self.fingerprint:
            self.log("stale: the caller's code or environment differs; exiting")
            return {"status": "stale"}, True
        self.notices.clear()
        try:
            answer = self.search(request)
        except _Fallback as why:
            return {"status": "fallback", "reason": str(why)}, False
        except Exception as error:
            # Never an error message from here: the caller re-runs the search in-process and
            # reports it exactly as usual. The session may be broken: open it afresh next time.
            self.drop(request)
            self.log(f"left to the caller: {type(error).__name__}")
            return {"status": "fallback", "reason": type(error).__name__}, False
        finally:
            with contextlib.suppress(OSError):
                os.chdir(warm_dir(self.home))  # hold no user's folder busy between searches
        answer["notices"] = list(self.notices)
        self.served += 1
        self.log(f"served search {self.served}")
        return answer, False

    def close(self) -> None:
        for s in self.sessions.values():
            with contextlib.suppress(Exception):
                s.close()
        self.sessions.clear()


def _session_key(spec: dict[str, Any]) -> str:
    """What defines an open session: the server (url, key, gRPC port), the collection and the
    consistency level, and the tenant when there is one. The query model is the session's own
    business (one embedder per model)."""
    key: list[Any] = [spec["connection"], spec["collection"], spec["consistency"]]
    if spec.get("tenant") is not None:
        key.append({"tenant": spec["tenant"]})
    return json.dumps(key, sort_keys=True)


class _Fallback(Exception):
    """This request is the caller's to run in-process."""


def _local_server_running(home: Path) -> bool:
    from stitcher import server

    return server.status(home).state == "running"


def serve(spec: dict[str, Any]) -> None:
    """Run a worker: listen, open the first request's session, answer until idle or stopped."""
    home = Path(spec["home"])
    folder = warm_dir(home)
    _private_dir(folder)
    os.chdir(folder)  # hold no user's working directory busy
    worker = _Worker(home, float(spec.get("idle", DEFAULT_IDLE)))
    lock = (folder / LOCK_FILE).open("a")
    # A stale worker that was just told to exit may still hold the lock for a moment.
    deadline = time.monotonic() + 5
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if time.monotonic() > deadline:
                worker.log("another worker is running; exiting")
                return
            time.sleep(0.1)

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, terminate)
    path = socket_path(home)
    _private_dir(path.parent)
    path.unlink(missing_ok=True)  # a dead worker's: we hold the lock
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)  # born 0600: no moment where others could connect
    try:
        listener.bind(str(path))
    finally:
        os.umask(previous)
    listener.listen(16)
    (folder / PID_FILE).write_text(f"{os.getpid()}\n", encoding="utf-8")
    worker.log(f"listening on {path} (idle exit after {worker.idle:g} s)")
    try:
        first = spec.get("first")
        if isinstance(first, dict):
            try:
                _warm_up(worker, first)
            except Exception as error:  # the next search reports it, in-process
                worker.drop(first)
                worker.log(f"no warm-up: {type(error).__name__}")
        worker.last_search = time.monotonic()  # the idle time starts once it is warm
        for conn in _connections(listener, worker.idle_left):
            with conn:
                if not _same_user(conn):
                    continue
                request = _read_request(conn)
                if request is None:
                    continue
                answer, done = worker.handle(request)
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps(answer, ensure_ascii=False).encode("utf-8"))
                if done:
                    return
        worker.log(f"idle for {worker.idle:g} s; exiting")
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            path.unlink()
        with contextlib.suppress(OSError):
            (folder / PID_FILE).unlink()
        worker.close()
        lock.close()


def _warm_up(worker: _Worker, first: dict[str, Any]) -> None:
    """Open the client and the query model now, so the next search finds them ready."""
    from stitcher.request import SearchRequest

    s = worker.session(first)
    embedder = s.query_embedder(SearchRequest.from_wire(first["search"]).model)
    # A by-script model loads each part on its first query: warm both languages' parts.
    for text in ("warm up", "预热") if getattr(embedder, "parts", None) else ("warm up",):
        embedder.embed_query(text)
    worker.log("warmed up")


def _connections(
    listener: socket.socket, idle_left: Callable[[], float]
) -> Iterator[socket.socket]:
    while True:
        left = idle_left()
        if left <= 0:
            return
        listener.settimeout(left)
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            return
        conn.settimeout(10)
        yield conn


def _same_user(conn: socket.socket) -> bool:
    """The socket's mode keeps others out; the peer's credentials make sure of it."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    credentials = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return bool(uid == os.getuid())


def _read_request(conn: socket.socket) -> dict[str, Any] | None:
    try:
        data = _read_all(conn, MAX_REQUEST)
        request = json.loads(data.decode("utf-8"))
    except (OSError, ValueError):
        return None
    return request if isinstance(request, dict) else None


# --- results as data --------------------------------------------------------------------------


def result_to_data(result: Any) -> dict[str, Any]:
    """A SearchResult as JSON-ready data that `result_from_data` turns back into an equal one
    (metadata values that are not JSON types, such as dates, come back as their ISO text)."""
    data = asdict(result)
    data["passages"] = [{**asdict(p), "metadata": _plain(p.metadata)} for p in result.passages]
    data["extra"] = _plain(result.extra)
    return data


def result_from_data(data: dict[str, Any]) -> Any:
    """The SearchResult that `result_to_data` described."""
    from stitcher.models import Passage, ScoreExplain
    from stitcher.search import SearchResult

    passages = []
    for item in data["passages"]:
        explain = item["explain"]
        passages.append(
            Passage(
                **{
                    **item,
                    "hit_ids": tuple(item["hit_ids"]),
                    "chunk_ids": tuple(item["chunk_ids"]),
                    "hit_spans": tuple(tuple(span) for span in item["hit_spans"]),
                    "explain": ScoreExplain(**explain) if explain is not None else None,
                }
            )
        )
    return SearchResult(**{**data, "passages": passages})


def _plain(value: dict[str, Any]) -> dict[str, Any]:
    plain: dict[str, Any] = json.loads(json.dumps(value, ensure_ascii=False, default=_iso))
    return plain


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def main() -> None:
    """A worker (see start_worker), its start request read from stdin."""
    serve(json.loads(sys.stdin.read()))
