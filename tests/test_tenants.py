"""Many knowledge bases in one collection (`--tenant`, Weaviate multi-tenancy).

The store contract runs on stores bound to a tenant and the tenant contract (stitcher.testing) on
both stores; ingest, prune, drop, locks and the CLI run against the session's real Weaviate, the
CLI through the installed script (exit codes as a shell sees them).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus, LockHeld
from stitcher.graph.model import KINDS, entity_collection
from stitcher.store.base import ChunkStore
from stitcher.store.memory import MemoryServer, MemoryStore
from stitcher.testing import SETTINGS, ChunkStoreContract, OpenStore, TenantContract
from tests.test_exit_codes import assert_one_error_line, run_stitcher, script_environment
from tests.test_sources import make_root, run


def _name() -> str:
    return f"Tenants_{uuid.uuid4().hex[:12]}"


def _drop_everything(client: Any, names: set[str]) -> None:
    from stitcher.store.weaviate import WeaviateStore

    for name in names:
        WeaviateStore(client, name).drop(all_tenants=True)
        for kind in KINDS:
            client.collections.delete(entity_collection(name, kind))


class TestTenantChunkStore(ChunkStoreContract):
    """A store bound to one tenant keeps the whole contract of a collection."""

    @pytest.fixture(params=["memory", pytest.param("weaviate", marks=pytest.mark.integration)])
    def store(self, request: pytest.FixtureRequest) -> Iterator[ChunkStore]:
        name = _name()
        if request.param == "memory":
            yield MemoryStore(name, tenant="kb-1")
            return
        from stitcher.store.weaviate import WeaviateStore

        client = request.getfixturevalue("weaviate_client")
        real = WeaviateStore(client, name, retry_delays=(0.05, 0.05), tenant="kb-1")
        try:
            yield real
        finally:
            _drop_everything(client, {real.name})

    def test_collection_names_list_it_while_it_exists_and_never_bookkeeping(
        self, store: ChunkStore
    ) -> None:
        """Unlike a collection, a dropped tenant leaves its collection to the other tenants."""
        assert store.name not in store.collection_names()
        store.create(SETTINGS)
        store.register_source("docs", "/somewhere/docs")
        assert store.name in store.collection_names()
        store.drop()
        assert store.name in store.collection_names() and not store.exists()


class TestTenants(TenantContract):
    @pytest.fixture(params=["memory", pytest.param("weaviate", marks=pytest.mark.integration)])
    def open_store(self, request: pytest.FixtureRequest) -> Iterator[OpenStore]:
        first = _name()
        made: set[str] = set()
        if request.param == "memory":
            server = MemoryServer()

            def memory(tenant: str | None, name: str | None = None) -> ChunkStore:
                return MemoryStore(name or (first if tenant else _name()), server, tenant=tenant)

            yield memory
            return
        from stitcher.store.weaviate import WeaviateStore

        client = request.getfixturevalue("weaviate_client")

        def weaviate(tenant: str | None, name: str | None = None) -> ChunkStore:
            chosen = name or (first if tenant else _name())
            made.add(chosen)
            return WeaviateStore(client, chosen, tenant=tenant)

        try:
            yield weaviate
        finally:
            _drop_everything(client, made)


# --- ingest, prune, drop and locks on the real server -----------------------------------------


@pytest.fixture
def collection(weaviate_client: Any) -> Iterator[str]:
    name = _name()
    yield name
    _drop_everything(weaviate_client, {name})


def _tenant_store(client: Any, name: str, tenant: str | None) -> Any:
    from stitcher.store.weaviate import WeaviateStore

    return WeaviateStore(client, name, tenant=tenant)


@pytest.mark.integration
def test_two_tenants_ingest_the_same_paths_and_stay_apart(
    weaviate_client: Any, collection: str, tmp_path: Path
) -> None:
    """Same relative paths, same source name, other folders and text: ids, counts, searches,
    sources, prune and drop never cross from one tenant to the other."""
    alpha_root = make_root(tmp_path, "alpha", ("one", "two", "three"))
    beta_root = make_root(tmp_path, "beta", ("one", "two", "three"))
    alpha = _tenant_store(weaviate_client, collection, "alpha")
    beta = _tenant_store(weaviate_client, collection, "beta")
    assert run(alpha, alpha_root).exit_status == 0
    assert run(beta, beta_root).exit_status == 0  # its folder "docs" is no other's source

    paths = {"docs/one.txt", "docs/two.txt", "docs/three.txt"}
    assert set(alpha.documents()) == set(beta.documents()) == paths
    assert alpha.count() == beta.count() > 0
    assert alpha.source_roots() == {"docs": str(alpha_root)}
    assert beta.source_roots() == {"docs": str(beta_root)}
    alpha_ids = {r.id for r in alpha.sample(1000)}
    beta_ids = {r.id for r in beta.sample(1000)}
    assert not alpha.fetch(sorted(beta_ids)) and not beta.fetch(sorted(alpha_ids))

    from stitcher.search import SearchOptions, search

    def owners(store: Any) -> set[str]:
        found = search(store, "alpha one", lambda _q: [0.0] * 384, SearchOptions(alpha=0.0))
        return {passage.text.split(" ")[0] for passage in found.passages}

    assert owners(alpha) == {"alpha"} and owners(beta) == {"beta"}

    (alpha_root / "one.txt").unlink()
    pruned = run(alpha, alpha_root, prune=True)
    assert pruned.deleted == ["docs/one.txt"]
    assert set(alpha.documents()) == paths - {"docs/one.txt"}
    assert set(beta.documents()) == paths

    from stitcher.api import Stitcher

    with Stitcher(collection=collection, tenant="alpha") as s:
        assert s.drop() is True
    assert not alpha.exists() and set(beta.documents()) == paths
    assert [t.name for t in beta.tenants()] == ["beta"]


@pytest.mark.integration
def test_a_lease_on_one_tenant_never_blocks_another(weaviate_client: Any, collection: str) -> None:
    from stitcher.config import ConnectionSettings
    from stitcher.locks import Lease, lock_key

    board = _tenant_store(weaviate_client, collection, "alpha").leases()
    holder = Lease(board, collection, command="ingest", tenant="alpha")
    with holder.held(wait=False):
        other_tenant = Lease(board, collection, command="ingest", tenant="beta")
        other_tenant.acquire(wait=False)  # not refused
        other_tenant.release()
        with pytest.raises(LockHeld, match="tenant 'alpha' of"):
            Lease(board, collection, command="ingest", tenant="alpha").acquire(wait=False)
    server = ConnectionSettings(url="http://h:8080")
    keys = {lock_key(server, collection), *(lock_key(server, collection, t) for t in "ab")}
    assert len(keys) == 3  # file locks and load memos are the tenant's own too


# --- the CLI: installed script, real server ---------------------------------------------------


@pytest.fixture
def two_tenants(weaviate_client: Any, collection: str, tmp_path: Path) -> str:
    run(_tenant_store(weaviate_client, collection, "kb-a"), make_root(tmp_path, "alpha"))
    run(_tenant_store(weaviate_client, collection, "kb-b"), make_root(tmp_path, "beta"))
    return collection


def _tenants(collection: str) -> list[dict[str, Any]]:
    listed = run_stitcher("tenants", "-c", collection, "--json")
    assert listed.returncode == 0, listed.stderr
    rows: list[dict[str, Any]] = json.loads(listed.stdout)
    return rows


@pytest.mark.integration
def test_mixing_tenants_and_single_tenant_collections_exits_2_with_the_fix(
    weaviate_client: Any, two_tenants: str, tmp_path: Path
) -> None:
    no_tenant = run_stitcher("search", "alpha", "-c", two_tenants)
    assert no_tenant.returncode == ExitStatus.USAGE == 2, no_tenant.stderr
    assert "name the tenant with --tenant NAME" in assert_one_error_line(no_tenant.stderr)

    whole = run_stitcher("drop", "-c", two_tenants, "--yes")
    assert whole.returncode == ExitStatus.USAGE, whole.stderr
    assert "holds 2 tenants" in assert_one_error_line(whole.stderr) and "--all-tenants" in (
        whole.stderr
    )

    single = _name()
    try:
        run(_tenant_store(weaviate_client, single, None), make_root(tmp_path / "s", "solo"))
        for args in (
            ["search", "solo", "-c", single, "--tenant", "kb-a"],
            ["ingest", str(tmp_path / "s" / "solo" / "docs"), "-c", single, "--tenant", "kb-a"],
            ["tenants", "-c", single],
        ):
            refused = run_stitcher(*args)
            assert refused.returncode == ExitStatus.USAGE, (args, refused.stderr)
            assert "single-tenant" in assert_one_error_line(refused.stderr)
    finally:
        _drop_everything(weaviate_client, {single})

    bad = run_stitcher("search", "x", "-c", two_tenants, "--tenant", "kb a")
    assert bad.returncode == ExitStatus.USAGE
    assert "invalid tenant name 'kb a'" in assert_one_error_line(bad.stderr)
    assert [row["name"] for row in _tenants(two_tenants)] == ["kb-a", "kb-b"]  # nothing changed


@pytest.mark.integration
def test_tenants_are_listed_deactivated_searched_and_dropped_one_by_one(
    two_tenants: str, tmp_path: Path
) -> None:
    rows = _tenants(two_tenants)
    assert [(r["name"], r["status"]) for r in rows] == [("kb-a", "ACTIVE"), ("kb-b", "ACTIVE")]
    assert rows[0]["chunks"] == rows[1]["chunks"] > 0
    chunks = rows[1]["chunks"]

    off = run_stitcher("tenants", "deactivate", "kb-b", "-c", two_tenants)
    assert off.returncode == 0 and "ACTIVE -> INACTIVE" in off.stderr, off.stderr
    assert _tenants(two_tenants)[1] == {"name": "kb-b", "status": "INACTIVE", "chunks": None}

    # The tenant from the environment (STITCHER_TENANT); a deactivated tenant still answers.
    env = script_environment(STITCHER_TENANT="kb-b", STITCHER_WARM="never")
    found = run_stitcher("search", "beta one", "-c", two_tenants, "--json", env=env)
    assert found.returncode == 0, found.stderr
    texts = [p["text"] for p in json.loads(found.stdout)["results"]]
    assert texts and all(t.startswith("beta") for t in texts)
    assert _tenants(two_tenants)[1]["status"] == "ACTIVE"

    missing = run_stitcher("tenants", "activate", "kb-zz", "-c", two_tenants)
    assert missing.returncode == ExitStatus.FAILED
    assert "has no tenant 'kb-zz'" in assert_one_error_line(missing.stderr)

    # A profile's tenant (stitcher.toml in the working folder) names it for stats.
    (tmp_path / "stitcher.toml").write_text('[profiles.b]\ntenant = "kb-b"\n', encoding="utf-8")
    stats = run_stitcher_in(tmp_path, "--profile", "b", "stats", "-c", two_tenants, "--json")
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    assert (
        data["tenant"] == "kb-b" and data["chunks"] == chunks and list(data["shards"]) == ["kb-b"]
    )

    exported = tmp_path / "kb-a.jsonl"
    out = run_stitcher("export", str(exported), "-c", two_tenants, "--tenant", "kb-a")
    assert out.returncode == 0, out.stderr
    back = run_stitcher("import", str(exported), "-c", two_tenants, "--tenant", "kb-c")
    assert back.returncode == 0, back.stderr
    assert _tenants(two_tenants)[2] == {"name": "kb-c", "status": "ACTIVE", "chunks": chunks}

    dropped = run_stitcher("drop", "-c", two_tenants, "--tenant", "kb-a", "--yes")
    assert dropped.returncode == 0 and f"dropped tenant kb-a of {two_tenants}" in dropped.stderr
    assert [r["name"] for r in _tenants(two_tenants)] == ["kb-b", "kb-c"]
    gone = run_stitcher("search", "alpha", "-c", two_tenants, "--tenant", "kb-a", env=env)
    assert gone.returncode == ExitStatus.FAILED
    assert "has no tenant 'kb-a'" in assert_one_error_line(gone.stderr)

    everything = run_stitcher("drop", "-c", two_tenants, "--all-tenants", "--yes")
    assert everything.returncode == 0, everything.stderr
    listed = run_stitcher("tenants", "-c", two_tenants)
    assert listed.returncode == ExitStatus.FAILED and "does not exist" in listed.stderr


def run_stitcher_in(folder: Path, *args: str) -> Any:
    import subprocess

    from tests.test_exit_codes import stitcher_script

    return subprocess.run(
        [str(stitcher_script()), *args],
        env=script_environment(),
        cwd=folder,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.integration
def test_doctor_checks_a_multi_tenant_collection_without_waking_its_tenants(
    weaviate_client: Any, two_tenants: str
) -> None:
    from stitcher.config import ConnectionSettings
    from stitcher.doctor import DoctorOptions, check_collections

    store = _tenant_store(weaviate_client, two_tenants, None)
    store.set_tenant_active("kb-a", False)
    options = DoctorOptions(ConnectionSettings(), collection=two_tenants)
    (check,) = check_collections(weaviate_client, options)
    assert check.status == "ok", check
    assert "multi-tenant: 2 tenants (1 active)" in check.detail
    other = DoctorOptions(ConnectionSettings(), collection=two_tenants, chunk_size=300)
    (refused,) = check_collections(weaviate_client, other)
    assert refused.status == "warn" and "multi-tenant: 2 tenants" in refused.detail
    assert "ingest with these flags is refused: chunk_size: 250 (collection) != 300" in (
        refused.detail
    )
    assert [t.status for t in store.tenants(count=False)] == ["INACTIVE", "ACTIVE"]


@pytest.mark.integration
def test_doctor_with_a_tenant_checks_its_documents_and_reads_no_other_tenant(
    weaviate_client: Any, two_tenants: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stitcher import rules
    from stitcher.config import ConnectionSettings
    from stitcher.doctor import DoctorOptions, check_collections

    store = _tenant_store(weaviate_client, two_tenants, None)
    store.set_tenant_active("kb-b", False)

    def doctor(tenant: str, collection: str | None = two_tenants) -> list[Any]:
        options = DoctorOptions(ConnectionSettings(), collection=collection, tenant=tenant)
        found = check_collections(weaviate_client, options)
        return [c for c in found if two_tenants in c.name or c.name.startswith("tenant ")]

    (checked,) = doctor("kb-a")
    assert checked.name == f"collection {two_tenants}, tenant kb-a"
    assert checked.status == "ok" and checked.detail.startswith("3 documents"), checked
    assert f"text rules {rules.TEXT_RULES_VERSION}" in checked.detail

    # Found by scanning every collection too, and a rule change shows per tenant.
    monkeypatch.setattr(rules, "TEXT_RULES_VERSION", rules.TEXT_RULES_VERSION + ".next")
    (older,) = doctor("kb-a", collection=None)
    assert older.status == "warn" and "3 stored under older text rules" in older.detail, older

    (asleep,) = doctor("kb-b")
    assert asleep.status == "warn" and "inactive" in asleep.detail, asleep
    assert f"tenants activate kb-b --collection {two_tenants}" in asleep.fix
    assert [t.status for t in store.tenants(count=False)] == ["ACTIVE", "INACTIVE"]

    shared, missing = doctor("kb-zz")
    assert shared.status == "ok" and "multi-tenant: 2 tenants (1 active)" in shared.detail
    assert missing.status == "fail" and missing.name == "tenant kb-zz", missing
    assert f"not a tenant of collection {two_tenants}" in missing.detail


@pytest.mark.integration
def test_doctor_names_a_missing_tenant_and_exits_1_through_the_script(two_tenants: str) -> None:
    done = run_stitcher("doctor", "-c", two_tenants, "--tenant", "kb-zz", "--json")
    assert done.returncode == ExitStatus.FAILED == 1, done.stderr
    checks = {c["check"]: c for c in json.loads(done.stdout)}
    assert checks["tenant kb-zz"]["status"] == "fail", checks
    assert checks[f"collection {two_tenants}"]["status"] == "ok"

    found = run_stitcher("doctor", "-c", two_tenants, "--tenant", "kb-a", "--json")
    checked = {c["check"]: c for c in json.loads(found.stdout)}
    assert checked[f"collection {two_tenants}, tenant kb-a"]["status"] == "ok", found.stdout


@pytest.mark.integration
def test_the_first_ingests_of_two_tenants_may_race_to_create_the_collection(
    weaviate_client: Any, collection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tenants' writers do not wait for each other, so two first ingests can both find no
    collection; the one whose create is refused adds its tenant to the other's collection."""
    _tenant_store(weaviate_client, collection, "kb-a").create(SETTINGS)
    real_exists = weaviate_client.collections.exists
    answers = iter([False])  # b looks before a's collection is there

    def exists(name: str) -> bool:
        return next(answers, None) is not False and real_exists(name)

    monkeypatch.setattr(weaviate_client.collections, "exists", exists)
    late = _tenant_store(weaviate_client, collection, "kb-b")
    late.create(SETTINGS)
    monkeypatch.undo()
    assert [t.name for t in late.tenants(count=False)] == ["kb-a", "kb-b"]
    assert late.exists() and late.settings() == SETTINGS


def _org_file(path: Path, aliases: list[str]) -> str:
    row = {"id": "bluefin", "name": "Bluefin Logistics", "aliases": aliases, "country": "Norway"}
    path.write_text(json.dumps(row) + "\n", "utf-8")
    return str(path)


def _mentioning(collection: str, tenant: str, where: str) -> set[str]:
    found = run_stitcher(
        "search", "--latest", "-c", collection, "--tenant", tenant, "-w", where, "--json"
    )
    assert found.returncode == 0, found.stderr
    return {p["doc_id"] for p in json.loads(found.stdout)["results"]}


def _json_of(*args: str) -> Any:
    done = run_stitcher(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.integration
def test_entities_are_shared_by_tenants_and_each_tenants_mentions_are_relinked(
    weaviate_client: Any, collection: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One organization file serves every knowledge base of a collection; re-loading it re-links
    the stored mentions of every active tenant (or of --tenant alone) and skips inactive ones,
    and `entities show` tells the tenants' documents apart."""
    orgs = _org_file(tmp_path / "organizations.jsonl", ["Bluefin"])
    loaded = _json_of("entities", "load", orgs, "-c", collection)
    assert loaded["created"] == ["organization:bluefin"] and "chunks_relinked" not in loaded

    for tenant, mentions, text in (
        ("kb-a", ["Bluefin", "Bluefin Freight"], "Bluefin Logistics opened a depot in Oslo."),
        ("kb-b", ["Bluefin Freight"], "蓝鳍货运宣布在卑尔根扩建仓库。"),
        ("kb-c", ["Bluefin Freight"], "Bluefin Freight hired forty drivers."),
    ):
        folder = tmp_path / tenant / "docs"
        folder.mkdir(parents=True)
        front = f"---\ntitle: {tenant}\nmentions: {json.dumps(mentions)}\n---\n"
        (folder / f"{tenant}.md").write_text(front + text + "\n", "utf-8")
        done = run_stitcher("ingest", str(folder), "-c", collection, "--tenant", tenant)
        assert done.returncode == 0, done.stderr
    assert _mentioning(collection, "kb-a", "mentions.id=bluefin") == {"docs/kb-a.md"}
    assert _mentioning(collection, "kb-b", "mentions.id=bluefin") == set()

    # kb-c is put to sleep: a relink of every tenant must not wake it.
    off = run_stitcher("tenants", "deactivate", "kb-c", "-c", collection)
    assert off.returncode == 0, off.stderr

    orgs = _org_file(tmp_path / "organizations.jsonl", ["Bluefin", "Bluefin Freight"])
    report = _json_of("entities", "load", orgs, "-c", collection)
    assert report["updated"] == ["organization:bluefin"]
    assert report["tenants_relinked"] == ["kb-a", "kb-b"] and report["tenants_inactive"] == ["kb-c"]
    assert report["chunks_relinked"] >= 1 and report["unresolved_mentions"] == {}
    assert [(r["name"], r["status"]) for r in _tenants(collection)][2] == ("kb-c", "INACTIVE")
    assert _mentioning(collection, "kb-a", "mentions.id=bluefin") == {"docs/kb-a.md"}
    assert _mentioning(collection, "kb-b", "mentions.id=bluefin") == {"docs/kb-b.md"}

    shown = _json_of("entities", "show", "Bluefin", "-c", collection)
    assert shown["mentioned_by_tenant"] == {"kb-a": ["docs/kb-a.md"], "kb-b": ["docs/kb-b.md"]}
    assert "mentioned_in" not in shown
    one = _json_of("entities", "show", "Bluefin", "-c", collection, "--tenant", "kb-b")
    assert one["mentioned_in"] == ["docs/kb-b.md"] and "mentioned_by_tenant" not in one

    # --tenant re-links that tenant alone (waking it if asleep); the others keep their links.
    orgs = _org_file(tmp_path / "organizations.jsonl", ["Bluefin", "Bluefin Cargo"])
    report = _json_of("entities", "load", orgs, "-c", collection, "--tenant", "kb-c")
    assert report["tenants_relinked"] == ["kb-c"]
    assert report["unresolved_mentions"] == {"docs/kb-c.md": ["Bluefin Freight"]}
    assert _mentioning(collection, "kb-b", "mentions.id=bluefin") == {"docs/kb-b.md"}
    assert _mentioning(collection, "kb-c", "mentions.id=bluefin") == set()

    text = run_stitcher("entities", "load", orgs, "-c", collection)
    assert text.returncode == 0, text.stderr
    assert "of 3 tenant(s)" in text.stderr
    assert "unresolved mentions in tenant kb-b: docs/kb-b.md: Bluefin Freight" in text.stderr

    missing = run_stitcher("entities", "show", "Bluefin", "-c", collection, "--tenant", "kb-zz")
    assert missing.returncode == ExitStatus.FAILED
    assert "has no tenant 'kb-zz'" in assert_one_error_line(missing.stderr)
    missing = run_stitcher("entities", "load", orgs, "-c", collection, "--tenant", "kb-zz")
    assert missing.returncode == ExitStatus.FAILED
    assert "has no tenant 'kb-zz'" in assert_one_error_line(missing.stderr)

    # An organization mentioned by more chunks than one query lists: every link is rewritten,
    # and stays right.
    from stitcher.store.weaviate import mentions
    from stitcher.store.weaviate.entities import EntityStore

    monkeypatch.setattr(mentions, "_LINK_SCAN_LIMIT", 1)
    relinked = EntityStore(weaviate_client, collection, "kb-a").relink()
    assert relinked is not None and relinked.tenants == ["kb-a"]
    assert relinked.chunks_changed == relinked.chunks_checked > 0
    assert _mentioning(collection, "kb-a", "mentions.id=bluefin") == {"docs/kb-a.md"}
