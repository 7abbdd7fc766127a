"""Sources: a document belongs to the source that ingested it; two folders with one name never
share ids or prune each other; collections from before sources keep working."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stitcher.config import DEFAULT_MODEL
from stitcher.errors import UsageError
from stitcher.ingest import IngestOptions, ingest
from tests.fakes import FakeEmbedder
from tests.stores import both_stores

ROOT = Path(__file__).resolve().parent.parent
STITCHER = Path(sys.executable).parent / "stitcher"
TEXT = "The ferry leaves at dawn. It crosses the bay in forty minutes. Nobody is ever late. "


def make_root(base: Path, owner: str, names: tuple[str, ...] = ("one", "two", "three")) -> Path:
    """A folder `<base>/<owner>/docs` with a few text files whose text names their owner."""
    root = base / owner / "docs"
    root.mkdir(parents=True)
    for name in names:
        (root / f"{name}.txt").write_text(f"{owner} {name}. " + TEXT * 3, encoding="utf-8")
    return root


def run(store: Any, root: Path, **opts: Any) -> Any:
    """Ingest with a fake embedder that claims the real model's name and dimension, so the CLI
    (which uses the real model) can take the collection over without embedding anything."""
    embedder = FakeEmbedder(dimension=384)
    return ingest(
        store,
        [str(root)],
        model_name=DEFAULT_MODEL,
        embedder=lambda: embedder,
        options=IngestOptions(**opts),
    )


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The installed `stitcher` script, importing this checkout, against the session's server."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [str(STITCHER), *args], env=env, capture_output=True, text=True, input=stdin, timeout=600
    )


store = both_stores("Src")


@pytest.fixture
def weaviate_store(weaviate_client: Any) -> Iterator[Any]:
    from stitcher.store.weaviate import WeaviateStore

    name = "Src" + uuid.uuid4().hex[:12]
    real = WeaviateStore(weaviate_client, name)
    yield real
    real.forget_sources()
    weaviate_client.collections.delete(name)


def doc_ids(store: Any) -> set[str]:
    return set(store.documents())


def test_the_default_source_is_the_folder_name(store: Any, tmp_path: Path) -> None:
    root = make_root(tmp_path, "a")
    summary = run(store, root)
    assert summary.exit_status == 0
    assert doc_ids(store) == {"docs/one.txt", "docs/two.txt", "docs/three.txt"}
    assert store.source_roots() == {"docs": str(root)}


def test_another_folder_with_the_same_name_is_refused_and_nothing_changes(
    store: Any, tmp_path: Path
) -> None:
    first, second = make_root(tmp_path, "a"), make_root(tmp_path, "b", ("four",))
    run(store, first)
    before = (doc_ids(store), store.count(), store.source_roots())
    with pytest.raises(UsageError) as refused:
        run(store, second, prune=True)
    message = str(refused.value)
    assert str(first) in message and str(second) in message and "source=" in message
    assert refused.value.exit_status == 2
    assert (doc_ids(store), store.count(), store.source_roots()) == before


def test_the_same_folder_again_is_the_same_source(store: Any, tmp_path: Path) -> None:
    root = make_root(tmp_path, "a")
    run(store, root)
    summary = run(store, root, prune=True)
    assert len(summary.unchanged) == 3 and summary.deleted == []


def test_named_sources_coexist_and_prune_stays_inside_its_own(store: Any, tmp_path: Path) -> None:
    a, b = make_root(tmp_path, "a"), make_root(tmp_path, "b")
    run(store, a, source="a")
    run(store, b, source="b")
    assert doc_ids(store) == {f"{s}/{n}.txt" for s in "ab" for n in ("one", "two", "three")}
    assert store.source_roots() == {"a": str(a), "b": str(b)}
    (a / "two.txt").unlink()
    summary = run(store, a, source="a", prune=True)
    assert summary.deleted == ["a/two.txt"] and summary.exit_status == 0
    summary = run(store, b, source="b", prune=True)
    assert summary.deleted == [] and len(summary.unchanged) == 3
    assert {d for d in doc_ids(store) if d.startswith("b/")} == {
        "b/one.txt",
        "b/two.txt",
        "b/three.txt",
    }


def test_a_moved_folder_is_reattached_by_naming_its_source(store: Any, tmp_path: Path) -> None:
    old = make_root(tmp_path, "old")
    run(store, old)
    moved = tmp_path / "new" / "docs"
    moved.parent.mkdir()
    old.rename(moved)
    with pytest.raises(UsageError):
        run(store, moved)
    summary = run(store, moved, source="docs", prune=True)
    assert len(summary.unchanged) == 3 and summary.deleted == []
    assert store.source_roots() == {"docs": str(moved)}


def test_a_dry_run_registers_nothing(store: Any, tmp_path: Path) -> None:
    root = make_root(tmp_path, "a")
    run(store, root)
    other = make_root(tmp_path, "b")
    run(store, other, source="b", dry_run=True)
    assert store.source_roots() == {"docs": str(root)}


@pytest.mark.parametrize("bad", ["", " a", "a/b", "..", "x\ny"])
def test_bad_source_names_are_usage_errors(bad: str, tmp_path: Path) -> None:
    from stitcher.store.memory import MemoryStore

    with pytest.raises(UsageError, match="source="):
        run(MemoryStore("T"), make_root(tmp_path, "a"), source=bad)


def test_a_source_names_one_folder(tmp_path: Path) -> None:
    from stitcher.store.memory import MemoryStore

    a, b = make_root(tmp_path, "a"), make_root(tmp_path, "b")
    with pytest.raises(UsageError, match="exactly one PATH"):
        ingest(
            MemoryStore("T"),
            [str(a), str(b)],
            model_name="m",
            embedder=FakeEmbedder,
            options=IngestOptions(source="x"),
        )


def test_documents_stored_before_sources_belong_to_the_first_folder_that_claims_them(
    store: Any, tmp_path: Path
) -> None:
    """A collection written by the previous layout: same ids, no registry entry. The next
    ingest takes its documents over without re-embedding, and its prune works as before."""
    root = make_root(tmp_path, "a")
    run(store, root)
    # Forget the registration, as if the collection had been written before sources existed.
    if hasattr(store, "forget_sources"):
        store.forget_sources()
    else:
        store._source_roots.clear()
    assert store.source_roots() == {}
    (root / "three.txt").unlink()
    embedder = FakeEmbedder(dimension=384)
    summary = ingest(
        store,
        [str(root)],
        model_name=DEFAULT_MODEL,
        embedder=lambda: embedder,
        options=IngestOptions(prune=True),
    )
    assert summary.deleted == ["docs/three.txt"] and len(summary.unchanged) == 2
    assert embedder.calls == 0
    assert store.source_roots() == {"docs": str(root)}


def test_cli_two_roots_with_one_name(weaviate_store: Any, tmp_path: Path) -> None:
    """/x/a/docs and /x/b/docs: the default names collide (exit 2, nothing changed); with
    --source each keeps its own documents and a prune of one never touches the other."""
    a, b = make_root(tmp_path, "a"), make_root(tmp_path, "b", ("four", "five", "six"))
    name = weaviate_store.name
    run(weaviate_store, a)
    before = (doc_ids(weaviate_store), weaviate_store.count())

    refused = cli("ingest", str(b), "--collection", name, "--prune")
    assert refused.returncode == 2, refused.stderr
    assert "--source" in refused.stderr and str(a) in refused.stderr
    assert (doc_ids(weaviate_store), weaviate_store.count()) == before
    assert weaviate_store.source_roots() == {"docs": str(a)}

    run(weaviate_store, b, source="b")  # embeds: done in-process with the fake embedder
    (b / "five.txt").unlink()
    pruned = cli("ingest", str(b), "--collection", name, "--source", "b", "--prune")
    assert pruned.returncode == 0, pruned.stderr
    assert doc_ids(weaviate_store) == before[0] | {"b/four.txt", "b/six.txt"}
    again = cli("ingest", str(a), "--collection", name, "--prune")
    assert again.returncode == 0, again.stderr
    assert "0 deleted" in again.stdout
    assert doc_ids(weaviate_store) == before[0] | {"b/four.txt", "b/six.txt"}
