"""The contracts of tenants: one store's own (`TenantAware`), and several tenants of one
multi-tenant collection (`TenantContract`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from stitcher.errors import SettingsMismatch, TenancyMismatch, TenantMissing, UsageError
from stitcher.models import CollectionSettings
from stitcher.segment import keyword_text
from stitcher.store.base import ChunkStore
from stitcher.testing.kit import SETTINGS, StoreFixtures, make_records, write_ok


class TenantAwareContract(StoreFixtures):
    """The store's own collection as `TenantAware` sees it (several tenants: `TenantContract`)."""

    def test_a_created_collection_exists_with_its_tenancy(self, store: ChunkStore) -> None:
        assert not store.collection_exists()
        store.create(SETTINGS)
        assert store.collection_exists() and store.exists()
        assert store.is_multi_tenant() == (store.tenant is not None)
        if store.tenant is None:
            with pytest.raises(TenancyMismatch):
                store.tenants()
        else:
            assert [info.name for info in store.tenants()] == [store.tenant]


OpenStore = Callable[..., ChunkStore]


class TenantContract:
    """What tenants of one multi-tenant collection keep apart, and what mixing is refused.

    Subclasses provide `open_store`: a callable `open_store(tenant, name=None)` returning a
    store of tenant `tenant` (None: no tenant) of a fresh collection (or of `name`), all on one
    server; the fixture removes what the test made.
    """

    @pytest.fixture
    def open_store(self) -> OpenStore:
        raise NotImplementedError("a TenantContract subclass provides the `open_store` fixture")

    def test_tenants_with_the_same_ids_keep_apart(self, open_store: OpenStore) -> None:
        a, b = open_store("kb-a"), open_store("kb-b")
        assert not a.exists() and not b.exists()
        a.create(SETTINGS)
        assert a.exists() and not b.exists()
        b.create(SETTINGS)
        ours = make_records("doc", "alpha beta gamma delta epsilon zeta")
        # The same ids with other text: each tenant is a shard of its own.
        theirs = [replace(r, text=r.text.upper(), chunk_hash="x" + r.chunk_hash) for r in ours]
        write_ok(a, ours)
        write_ok(b, theirs)
        write_ok(b, make_records("only-b", "nothing of a here"))
        assert a.count() == len(ours) and b.count() == len(ours) + 2
        assert {r.id for r in a.fetch([r.id for r in ours])} == {r.id for r in ours}
        assert {r.text for r in a.fetch([ours[0].id])} == {ours[0].text}
        assert {r.text for r in b.fetch([ours[0].id])} == {theirs[0].text}
        assert set(a.documents()) == {"doc"} and set(b.documents()) == {"doc", "only-b"}
        hits = a.hybrid("nothing", keyword_text("nothing"), [1, 0, 0, 0], limit=10, alpha=0.0)
        assert hits == []
        hits = b.hybrid("nothing", keyword_text("nothing"), [1, 0, 0, 0], limit=10, alpha=0.0)
        assert {h.record.doc_id for h in hits} == {"only-b"}

        a.register_source("docs", "/a/docs")
        b.register_source("docs", "/b/docs")
        assert a.source_roots() == {"docs": "/a/docs"}
        assert b.source_roots() == {"docs": "/b/docs"}

        assert a.delete_document("doc") == len(ours)
        assert a.count() == 0 and b.count() == len(ours) + 2
        assert a.drop() is True
        assert not a.exists() and a.drop() is False
        assert b.count() == len(ours) + 2 and b.source_roots() == {"docs": "/b/docs"}
        assert a.name in b.collection_names()  # the collection stays for its other tenants

    def test_the_collection_exists_apart_from_each_tenant(self, open_store: OpenStore) -> None:
        a = open_store("kb-a")
        assert not a.collection_exists()
        a.create(SETTINGS)
        b = open_store("kb-b", a.name)
        assert a.collection_exists() and b.collection_exists()
        assert a.exists() and not b.exists()
        assert a.is_multi_tenant() and b.is_multi_tenant()

    def test_tenants_are_listed_and_deactivated_and_a_read_activates(
        self, open_store: OpenStore
    ) -> None:
        a = open_store("kb-a")
        b = open_store("kb-b", a.name)
        a.create(SETTINGS)
        b.create(SETTINGS)
        write_ok(a, make_records("doc", "alpha beta gamma delta epsilon zeta"))
        listing = a.tenants()
        assert [(t.name, t.status, t.chunks) for t in listing] == [
            ("kb-a", "ACTIVE", 5),
            ("kb-b", "ACTIVE", 0),
        ]
        assert b.set_tenant_active("kb-a", False) == "ACTIVE"
        first = b.tenants()[0]
        assert (first.name, first.status, first.chunks) == ("kb-a", "INACTIVE", None)
        hits = a.hybrid("alpha", keyword_text("alpha"), [1, 0, 0, 0], limit=3, alpha=0.0)
        assert hits and hits[0].record.doc_id == "doc"  # answered: the read activated it
        assert b.tenants()[0].status == "ACTIVE"
        with pytest.raises(TenantMissing):
            b.set_tenant_active("kb-zzz", True)

    def test_a_tenant_that_does_not_exist_is_named(self, open_store: OpenStore) -> None:
        a = open_store("kb-a")
        a.create(SETTINGS)
        with pytest.raises(TenantMissing):
            open_store("kb-nope", a.name).settings()
        with pytest.raises(UsageError):
            open_store("not a tenant name", a.name)

    def test_tenants_share_the_collection_settings(self, open_store: OpenStore) -> None:
        a = open_store("kb-a")
        a.create(SETTINGS)
        other = CollectionSettings(model="other/model", dimension=4, chunk_size=10, chunk_overlap=2)
        b = open_store("kb-b", a.name)
        with pytest.raises(SettingsMismatch):
            b.create(other)
        assert [t.name for t in a.tenants()] == ["kb-a"]
        assert a.settings() == SETTINGS
        assert (a.settings() or SETTINGS).multi_tenant

    def test_mixing_tenants_and_a_single_tenant_collection_is_refused(
        self, open_store: OpenStore
    ) -> None:
        tenant = open_store("kb-a")
        tenant.create(SETTINGS)
        whole = open_store(None, tenant.name)
        assert whole.exists()
        with pytest.raises(TenancyMismatch, match="multi-tenant"):
            whole.settings()
        with pytest.raises(TenancyMismatch, match="all_tenants"):
            whole.drop()
        assert tenant.exists()

        single = open_store(None)
        single.create(SETTINGS)
        with pytest.raises(TenancyMismatch, match="single-tenant"):
            open_store("kb-a", single.name).exists()
        with pytest.raises(TenancyMismatch, match="single-tenant"):
            single.tenants()
        assert single.settings() == SETTINGS and not (single.settings() or SETTINGS).multi_tenant

        assert whole.drop(all_tenants=True) is True
        assert not whole.exists() and not tenant.exists()
