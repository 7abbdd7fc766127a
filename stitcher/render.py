"""Everything the CLI shows a person: panels, tables, progress. Takes rich Consoles; no logic.

User text (sources, queries, collection and field names, values, notices) always goes to rich as
`Text`, never as a str: rich parses strs as markup, so `report [draft] [red].txt` would lose its
brackets and `[/x]` would raise MarkupError — whatever markup setting the caller's Console has.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Column, Table
from rich.text import Text

from stitcher import warm
from stitcher.doctor import Check
from stitcher.errors import worded
from stitcher.fusion import one_sided
from stitcher.ingest import SilentProgress
from stitcher.models import Passage
from stitcher.provision import InstallEvent
from stitcher.search import SearchResult


def search_results(console: Console, result: SearchResult, explain: bool = False) -> None:
    """One panel per passage, the matching chunks highlighted inside the stitched text."""
    if not result.passages:
        console.print(Text.assemble(("no results for", "dim"), " ", repr(result.query)))
        return
    if explain and result.alpha_reason:
        console.print(Text(result.alpha_reason, style="dim"))
    for rank, passage in enumerate(result.passages, 1):
        body = _highlighted(passage)
        subtitle = f"score {passage.score:.3f}" if result.sorted_by == "score" else _dated(passage)
        if passage.truncated:
            subtitle += " · truncated"
        if explain and passage.explain is not None:
            subtitle += " · " + explain_line(passage)
        title = Text(f"{rank}. {where(passage)}  [{passage.start}:{passage.end}]")
        console.print(Panel(body, title=title, title_align="left", subtitle=Text(subtitle)))


def _dated(passage: Passage) -> str:
    """What a passage of `--latest` was sorted by: its document's date (undated ones come last)."""
    date = passage.metadata.get("date")
    if date is None:
        return "no date"
    if isinstance(date, str):  # from the warm worker, dates travel as ISO text
        with contextlib.suppress(ValueError):
            date = datetime.fromisoformat(date)
    if isinstance(date, datetime):
        return "date " + date.isoformat(timespec="seconds")
    return f"date {date}"


def where(passage: Passage) -> str:
    """Where to find the passage again: "file:line" for text files, "file p. N" for PDFs."""
    line, page = passage.metadata.get("line"), passage.metadata.get("page")
    if isinstance(line, int) and not isinstance(line, bool):
        return f"{passage.source}:{line}"
    if isinstance(page, int) and not isinstance(page, bool):
        return f"{passage.source} p. {page}"
    return passage.source


def explain_line(passage: Passage) -> str:
    """'keyword 0.82×0.5=0.41 + vector 0.66×0.5=0.33' — how the score came about."""
    e = passage.explain
    if e is None:
        return ""
    if e.fusion == "ranked":
        line = (
            f"ranked fusion, alpha {e.alpha}: keyword {_f(e.keyword_contribution)} + "
            f"vector {_f(e.vector_contribution)}"
        )
    else:
        line = (
            f"keyword {_f(e.keyword)}×{1 - e.alpha:.2f}={_f(e.keyword_contribution)} + "
            f"vector {_f(e.vector)}×{e.alpha:.2f}={_f(e.vector_contribution)}"
        )
        if one_sided(e):
            line += " · one side only"
    if e.demoted:
        line += f" · {e.demoted}: ranked after the other hits"
    return line


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _highlighted(passage: Passage) -> Text:
    text = Text(passage.text)
    for start, end in passage.hit_spans:
        lo = max(start, passage.start) - passage.start
        hi = min(end, passage.end) - passage.start
        if hi > lo:
            text.stylize("bold yellow", lo, hi)
    return text


def server_status(console: Console, status: dict[str, Any]) -> None:
    """`stitcher server status` as a small table: what is unknown (a stopped server's pid) is
    left out, never shown as None."""
    table = Table(show_header=False, box=None)
    for key, value in status.items():
        if key in ("nodes", "collections_on_disk") or value is None or value == "":
            continue  # nodes: a table of its own below
        if key == "collections":
            value = _collections_line(value, status.get("collections_on_disk"))
        if key == "warm_worker" and isinstance(value, dict):
            value = warm.describe(value)
        if key == "gse_dictionary_dir":
            # stitcher segments Chinese itself; gse_ch only matters to other clients
            value = value or "missing (the server's gse_ch tokenizer would index nothing)"
        table.add_row(Text(str(key), style="bold"), Text(str(value)))
    console.print(table)
    nodes = status.get("nodes") or []
    if nodes:
        node_table = Table("node", "pid", "REST", "gRPC", "gossip", "raft", "ready", "version")
        for node in nodes:
            node_table.add_row(
                *(
                    Text(str(node.get(key) if node.get(key) is not None else "-"))
                    for key in ("name", "pid", "http_port", "grpc_port", "gossip_port", "raft_port")
                ),
                Text("yes" if node.get("ready") else f"no ({node.get('detail')})"),
                Text(str(node.get("version") or "-")),
            )
        console.print(node_table)


def _collections_line(running: list[dict[str, Any]], on_disk: list[str] | None) -> str:
    """The collections of a running server with their counts, else those found on disk."""
    if on_disk is None:
        return ", ".join(f"{c['name']} ({c['objects']} objects)" for c in running) or "none"
    if not on_disk:
        return "none on disk"
    return (
        f"{len(on_disk)} on disk: {', '.join(on_disk)} "
        "(folder names, lower case; start the server for names and counts)"
    )


def key_value_table(console: Console, title: str, rows: Sequence[tuple[str, Any]]) -> None:
    """A two-column table with a title; long values wrap, never cut (they are data)."""
    table = Table(
        Column(overflow="fold"), Column(overflow="fold"), title=Text(title), show_header=False
    )
    for key, value in rows:
        table.add_row(Text(str(key)), Text(str(value)))
    console.print(table)


def fields_table(console: Console, fields: Sequence[Any]) -> None:
    """`stitcher fields`: name, type, examples."""
    table = Table("field", "type", "examples")
    for f in fields:
        table.add_row(Text(f.name), Text(f.kind), Text(", ".join(f.examples)))
    console.print(table)


def tenants_table(console: Console, tenants: Sequence[Any]) -> None:
    """`stitcher tenants`: name, activity status, chunks ("-": inactive, not counted)."""
    table = Table("tenant", "status", "chunks")
    for t in tenants:
        table.add_row(
            Text(t.name), Text(t.status), Text("-" if t.chunks is None else str(t.chunks))
        )
    console.print(table)


def stats_table(
    console: Console, stats: dict[str, Any], *, documents: bool = False, shards: bool = False
) -> None:
    """`stitcher stats`: the totals and the documents per source; with `documents` each
    document's chunks, with `shards` the shards and the nodes that hold them; documents whose
    chunks are not all stored are always named."""
    hidden = ("sources", "by_source", "shards", "incomplete")
    head = [(k, v) for k, v in stats.items() if k not in hidden and v is not None]
    key_value_table(console, stats["collection"], head)
    if shards and stats.get("shards"):
        shard_table = Table("shard", "nodes")
        for shard, nodes in stats["shards"].items():
            shard_table.add_row(Text(str(shard)), Text(", ".join(map(str, nodes))))
        console.print(shard_table)
    by_source = stats.get("by_source") or {}
    if by_source:
        table = Table(Column("source", overflow="fold"), "documents", "chunks")
        for source, counts in by_source.items():
            table.add_row(Text(source), Text(str(counts["documents"])), Text(str(counts["chunks"])))
        console.print(table)
    if documents:
        table = Table(Column("document", overflow="fold"), "chunks")
        for path, count in stats["sources"].items():
            table.add_row(Text(str(path)), Text(str(count)))
        console.print(table)
    incomplete = stats.get("incomplete") or {}
    if incomplete:
        # Named apart: their chunks are not all stored, so searches miss part of them.
        half = Table(
            Column("incomplete document (run ingest again)", overflow="fold"),
            "chunks stored",
        )
        for doc_id, count in incomplete.items():
            half.add_row(Text(str(doc_id)), Text(str(count)))
        console.print(half)


class IngestDisplay:
    """Live progress on a terminal: files done, chunks embedded, embeddings per second."""

    def __init__(self, console: Console, wording: Callable[[str], str] = worded) -> None:
        self._console = console
        #: Spells the settings a library notice names as flags (stitcher.errors.setting).
        self._wording = wording
        self._progress = Progress(
            TextColumn("{task.description:<9}"),
            BarColumn(),
            TextColumn("{task.fields[count]}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._files = self._progress.add_task("files", total=None, count="")
        self._chunks = self._progress.add_task("embedded", total=None, count="0 chunks")
        self._rate_since: float | None = None
        self._rate_base = 0
        self._files_total = 0
        self._files_done = 0
        self._embedded = 0

    def __enter__(self) -> IngestDisplay:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def planned(self, files: int) -> None:
        self._files_total = files
        self._progress.update(self._files, total=files, count=f"0/{files}")

    def file_done(self, source: str) -> None:
        self._files_done += 1
        self._progress.update(
            self._files, completed=self._files_done, count=f"{self._files_done}/{self._files_total}"
        )

    def embedded(self, chunks: int) -> None:
        now = time.monotonic()
        self._embedded += chunks
        if self._rate_since is None:
            # The first group also paid for loading the model: measure the rate after it.
            self._rate_since, self._rate_base = now, self._embedded
            count = f"{self._embedded} chunks"
        else:
            rate = (self._embedded - self._rate_base) / max(now - self._rate_since, 1e-6)
            count = f"{self._embedded} chunks, {rate:.1f}/s"
        self._progress.update(self._chunks, count=count)

    def notice(self, message: str) -> None:
        self._console.print(Text(self._wording(message), style="yellow"))


class QuietDisplay(SilentProgress):
    """No live display (not a terminal, e.g. cron): notices still go to stderr."""

    def __init__(self, console: Console, wording: Callable[[str], str] = worded) -> None:
        self._console = console
        self._wording = wording

    def __enter__(self) -> QuietDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def notice(self, message: str) -> None:
        self._console.print(Text(self._wording(message)), highlight=False)


class InstallDisplay:
    """`stitcher server install`, drawn from stitcher.provision's InstallEvents.

    On a terminal (`live`): ONE line that redraws itself — spinner, what is built, elapsed time,
    modules fetched — then a finish line. Elsewhere (logs, cron): a start line naming the log
    file and a finish line, nothing per module. Go's raw output only goes to the log file; a
    failure prints the log's last lines on `errors` (never silenced), before the error itself.
    """

    def __init__(self, console: Console, errors: Console, *, live: bool) -> None:
        self._console = console
        self._errors = errors
        self._live = live
        self._progress: Progress | None = None
        self._task: Any = None

    def __enter__(self) -> InstallDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __call__(self, event: InstallEvent) -> None:
        if event.kind == "started":
            self._started(event)
        elif event.kind == "module":
            if self._progress is not None:
                self._progress.update(self._task, modules=_modules(event.modules))
        elif event.kind == "finished":
            self._stop()
            self._console.print(
                Text(
                    f"Weaviate {event.version} installed at {event.target} in "
                    f"{_duration(event.elapsed)} ({_modules(event.modules)})"
                )
            )
        elif event.kind == "copied":
            self._console.print(
                Text(f"Weaviate {event.version} was already built: copied to {event.target}")
            )
        elif event.kind == "failed":
            self._stop()
            self._errors.print(
                Text(
                    f"go install failed after {_duration(event.elapsed)}; "
                    f"last lines of {event.log_file}:"
                )
            )
            for line in event.tail:
                self._errors.print(Text("  " + line))

    def _started(self, event: InstallEvent) -> None:
        what = f"Building Weaviate {event.version} with `go install`"
        if not self._live:
            self._console.print(Text(f"{what} (several minutes); full log: {event.log_file}"))
            return
        self._console.print(Text(f"Full log: {event.log_file}", style="dim"))
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[modules]}"),
            console=self._console,
            transient=True,
        )
        self._task = self._progress.add_task(what, total=None, modules=_modules(0))
        self._progress.start()


def _modules(count: int) -> str:
    return f"{count} module{'' if count == 1 else 's'} fetched"


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


_DOCTOR_STYLES = {"ok": "green", "warn": "yellow", "fail": "bold red"}


def doctor_report(console: Console, checks: Sequence[Check]) -> None:
    """`stitcher doctor`: one line per check — status, name, what was found, the fix."""
    width = max((len(c.name) for c in checks), default=0)
    for check in checks:
        line = Text.assemble(
            (f"{check.status:<4}", _DOCTOR_STYLES[check.status]),
            "  ",
            (f"{check.name:<{width}}", "bold"),
            "  ",
            check.detail,
        )
        if check.fix and check.status != "ok":
            line.append(" — fix: ")
            line.append(check.fix)
        console.print(line, soft_wrap=True)
