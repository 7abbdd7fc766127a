"""`stitcher server backup|restore`: the local server's filesystem backups, through the script."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus
from tests.test_exit_codes import assert_one_error_line, run_stitcher
from tests.test_transfer import filled, snapshot

pytestmark = pytest.mark.integration


def test_backup_drop_restore_gives_the_same_collection(
    weaviate_server: Any, weaviate_client: Any, stitcher_home: Path
) -> None:
    from stitcher.store.weaviate import WeaviateStore

    name = "Bak" + uuid.uuid4().hex[:10]
    store = filled(WeaviateStore(weaviate_client, name), 300)
    before, sources = snapshot(store), store.source_roots()
    backup_id = "t-" + uuid.uuid4().hex[:8]
    try:
        done = run_stitcher("server", "backup", "-c", name, backup_id)
        assert done.returncode == 0, done.stderr
        assert f"created backup {backup_id} ({name})" in done.stdout
        assert (stitcher_home / "backups" / backup_id).is_dir()

        taken = run_stitcher("server", "backup", "-c", name, backup_id)
        assert taken.returncode == ExitStatus.USAGE
        assert "exists" in assert_one_error_line(taken.stderr)

        over = run_stitcher("server", "restore", backup_id)
        assert over.returncode == ExitStatus.USAGE  # never over a live collection
        assert f"collection {name!r} exists" in assert_one_error_line(over.stderr)

        assert run_stitcher("drop", "-c", name, "--yes").returncode == 0
        assert not weaviate_client.collections.exists(name)
        assert WeaviateStore(weaviate_client, name).source_roots() == {}

        restored = run_stitcher("server", "restore", backup_id)
        assert restored.returncode == 0, restored.stderr
        assert f"restored backup {backup_id} ({name})" in restored.stdout
        again = WeaviateStore(weaviate_client, name)
        assert snapshot(again) == before
        assert again.settings() == store.settings()
        assert again.source_roots() == sources == {"notes": "/data/notes"}
    finally:
        WeaviateStore(weaviate_client, name).forget_sources()
        weaviate_client.collections.delete(name)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("backup", "Not_Lower"), "use lowercase letters"),
        (("restore", "no-such-backup"), "no backup 'no-such-backup'"),
        (("backup", "-c", "NoSuchCollection", "x1"), "'NoSuchCollection' does not exist"),
    ],
)
def test_backup_mistakes_are_one_clear_line(
    weaviate_server: Any, args: tuple[str, ...], expected: str
) -> None:
    done = run_stitcher("server", *args)
    assert done.returncode in (ExitStatus.USAGE, ExitStatus.FAILED), done.stderr
    assert expected in assert_one_error_line(done.stderr)
