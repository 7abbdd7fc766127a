"""--prune cannot destroy: it refuses (PruneRefused, exit 4, nothing deleted) after an empty or
failed listing and beyond --max-delete, while adds and updates still happen."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import PruneRefused, UsageError
from stitcher.ingest import DeleteLimit
from tests.stores import both_stores
from tests.test_sources import cli, doc_ids, make_root, run

NAMES = ("one", "two", "three", "four")


store = both_stores("Prune")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path, "a", NAMES)


def empty_the_folder(root: Path) -> None:
    """What an unmounted mount point looks like: the folder is there and lists nothing."""
    for path in root.iterdir():
        path.unlink()


def test_an_empty_listing_is_refused_and_nothing_is_deleted(store: Any, root: Path) -> None:
    run(store, root)
    count = store.count()
    empty_the_folder(root)
    summary = run(store, root, prune=True)
    assert summary.exit_status == 4 and summary.deleted == []
    assert isinstance(summary.prune_refused, PruneRefused)
    message = str(summary.prune_refused)
    assert "found no files" in message and "docs/four.txt" in message and "4 document" in message
    assert "max_delete=" in message  # the CLI says --max-delete
    assert store.count() == count


def test_more_than_half_of_a_source_is_refused(store: Any, root: Path) -> None:
    run(store, root)
    count = store.count()
    for name in ("one", "two", "three"):
        (root / f"{name}.txt").unlink()
    summary = run(store, root, prune=True)
    assert summary.exit_status == 4 and summary.deleted == [] and store.count() == count
    assert "3 of the 4 stored documents of source 'docs'" in str(summary.prune_refused)


def test_half_of_a_source_is_allowed_by_default(store: Any, root: Path) -> None:
    run(store, root)
    (root / "one.txt").unlink()
    (root / "two.txt").unlink()
    summary = run(store, root, prune=True)
    assert summary.exit_status == 0 and summary.deleted == ["docs/one.txt", "docs/two.txt"]
    assert doc_ids(store) == {"docs/three.txt", "docs/four.txt"}


@pytest.mark.parametrize(
    ("limit", "deleted"), [("100%", 3), ("75%", 3), ("3", 3), ("2", 0), ("10%", 0)]
)
def test_max_delete_sets_the_limit(store: Any, root: Path, limit: str, deleted: int) -> None:
    run(store, root)
    for name in ("one", "two", "three"):
        (root / f"{name}.txt").unlink()
    summary = run(store, root, prune=True, max_delete=DeleteLimit.parse(limit))
    assert len(summary.deleted) == deleted and len(doc_ids(store)) == 4 - deleted
    assert summary.exit_status == (0 if deleted else 4)


def test_max_delete_100_percent_allows_an_empty_listing(store: Any, root: Path) -> None:
    run(store, root)
    empty_the_folder(root)
    summary = run(store, root, prune=True, max_delete=DeleteLimit.parse("100%"))
    assert summary.exit_status == 0 and len(summary.deleted) == 4 and doc_ids(store) == set()


def test_a_dry_run_shows_the_refusal_and_writes_nothing(store: Any, root: Path) -> None:
    run(store, root)
    count = store.count()
    empty_the_folder(root)
    summary = run(store, root, prune=True, dry_run=True)
    assert summary.exit_status == 4 and summary.deleted == []
    assert "found no files" in str(summary.prune_refused)
    assert store.count() == count


def test_a_missing_root_is_refused(store: Any, root: Path) -> None:
    run(store, root)
    count = store.count()
    shutil.rmtree(root)
    summary = run(store, root, prune=True, max_delete=DeleteLimit.parse("100%"))
    assert summary.exit_status == 4 and summary.deleted == [] and store.count() == count
    refusal = str(summary.prune_refused)
    # The refusal names what could not be listed; the error itself is reported once, apart.
    assert f"listing had errors, about {root}" in refusal and "no such file" not in refusal
    assert any("no such file" in m for m in summary.unreadable.values())


def test_adds_and_updates_happen_before_the_refusal(store: Any, root: Path) -> None:
    run(store, root)
    for name in ("one", "two", "three"):
        (root / f"{name}.txt").unlink()
    (root / "new.txt").write_text("A new file arrived. " * 5, encoding="utf-8")
    summary = run(store, root, prune=True)
    assert summary.exit_status == 4 and summary.added == ["docs/new.txt"] and summary.deleted == []
    assert "docs/new.txt" in doc_ids(store) and len(doc_ids(store)) == 5


@pytest.mark.parametrize("bad", ["", "-1", "x", "150%", "5.5"])
def test_bad_max_delete_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="max_delete="):
        DeleteLimit.parse(bad)


def test_cli_refusals_exit_4_and_delete_nothing(weaviate_client: Any, tmp_path: Path) -> None:
    from stitcher.store.weaviate import WeaviateStore

    store = WeaviateStore(weaviate_client, "Prune" + uuid.uuid4().hex[:12])
    root = make_root(tmp_path, "a", NAMES)
    try:
        run(store, root)
        count = store.count()
        empty_the_folder(root)
        args = ("ingest", str(root), "--collection", store.name, "--prune")

        dry = cli(*args, "--dry-run")
        assert dry.returncode == 4, dry.stderr
        assert "found no files" in dry.stderr and "would delete" not in dry.stdout

        refused = cli(*args)
        assert refused.returncode == 4, refused.stderr
        assert "nothing was deleted" in refused.stderr and "docs/one.txt" in refused.stderr
        assert store.count() == count

        gone = cli("ingest", str(tmp_path / "nowhere" / "docs"), "-c", store.name, "--prune")
        assert gone.returncode == 4 and store.count() == count

        forced = cli(*args, "--max-delete", "100%")
        assert forced.returncode == 0, forced.stderr
        assert "4 deleted" in forced.stdout and store.count() == 0
    finally:
        store.forget_sources()
        weaviate_client.collections.delete(store.name)
