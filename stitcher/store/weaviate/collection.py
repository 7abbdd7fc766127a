"""The chunk collection's schema on the server: creating it (or joining one another writer just
created), the settings recorded on it, and its properties: read once, extended by writes (new
metadata keys, core properties added since an older stitcher made it).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from stitcher.errors import SettingsMismatch, StitcherError, setting
from stitcher.models import ChunkRecord, CollectionSettings
from stitcher.store.schema import (
    CORE_PROPERTIES,
    ExtraProperty,
    extra_from_description,
    properties_to_record,
    settings_from_description,
    settings_to_description,
    user_fields,
)
from stitcher.store.vectors import VECTORS_SINGLE, check_layout
from stitcher.store.weaviate.replication import Replication
from stitcher.store.weaviate.schema import (
    core_properties,
    extra_property,
    kind_of_property,
    vector_config_for,
)
from stitcher.store.weaviate.tenants import Tenants

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.


class CollectionSchema(Tenants, Replication):
    """Creating the collection, its recorded settings, and its properties."""

    def create(self, settings: CollectionSettings) -> None:
        """Create the collection with stitcher's schema and record `settings` in its description.

        The replication factor is this store's (see `replication_factor_to_create`), not the one
        in `settings`. Weaviate 1.38 runs async replication for every factor above 1 (the
        client's `async_enabled` is deprecated and dropped by the server), so a node that was
        down catches up on its own; deletes against updates are resolved by time.
        """
        from weaviate.classes.config import Configure, ReplicationDeletionStrategy

        check_layout(settings.vectors)
        if self._tenant is not None and self._client.collections.exists(self._name):
            self._join_existing(settings)
            return
        factor = self.replication_factor_to_create()
        multi_tenant = self._tenant is not None
        settings = dataclasses.replace(
            settings, replication_factor=factor, multi_tenant=multi_tenant
        )
        replication = Configure.replication(
            factor=factor,
            deletion_strategy=ReplicationDeletionStrategy.TIME_BASED_RESOLUTION,
        )
        # Tenants are created by their first ingest only (a typo in --tenant must not make a
        # new empty knowledge base); an inactive tenant is activated by the server when it is
        # read or written, so a deactivated knowledge base still answers (just slower once).
        tenancy = (
            Configure.multi_tenancy(
                enabled=True, auto_tenant_creation=False, auto_tenant_activation=True
            )
            if multi_tenant
            else None
        )
        try:
            self._call(
                "creating the collection",
                lambda: self._client.collections.create(
                    self._name,
                    description=settings_to_description(settings),
                    properties=core_properties(),
                    vector_config=vector_config_for(settings.vectors, settings.vector_index),
                    replication_config=replication,
                    multi_tenancy_config=tenancy,
                ),
            )
        except StitcherError:
            # The first ingests of two tenants, or of two sources, at once (their locks are
            # apart): the other made the collection, which is just as good if it made it with
            # these settings. `_call` has turned the refusal into a ServerFault; anything else
            # is re-raised as it is.
            if not self._client.collections.exists(self._name):
                raise
            self._join_existing(settings)
            return
        self._multi_tenant = multi_tenant
        if multi_tenant:
            self._add_tenant()
        self._extras = {}
        self._present = set(CORE_PROPERTIES)
        self._references = set()
        self._vectors = settings.vectors
        self._known_to_exist = True

    def _join_existing(self, settings: CollectionSettings) -> None:
        """Use the collection that exists already (made by another tenant's first ingest, or by
        a first ingest of another source that ran at the same time), adding this store's tenant
        to it: only if it was built with `settings`.

        Raises:
            TenancyMismatch: The collection is single-tenant and this store has a tenant, or the
                other way round.
            SettingsMismatch: The collection was built with another model or chunking.
        """
        config = self._call("reading the collection's settings", self._whole.config.get)
        self._check_tenancy(bool(config.multi_tenancy_config.enabled))
        recorded = settings_from_description(config.description)
        if recorded is None:
            raise SettingsMismatch(
                f"collection {self._name!r} was not created by stitcher (no settings recorded "
                f"on it); ingest into another {setting('collection')}"
            )
        differences = settings.differences(recorded)
        if differences:
            shared = (
                "Its tenants share its model and chunking"
                if self._tenant is not None
                else "Another ingest created it just now"
            )
            raise SettingsMismatch(
                f"collection {self._name!r} was built with other settings: "
                + "; ".join(differences)
                + f". {shared}: use them, or ingest into another {setting('collection')}"
            )
        self._multi_tenant = self._tenant is not None
        if self._tenant is not None:
            self._add_tenant()
        self._vectors = recorded.vectors
        self._extras = None  # read from the schema, which other writers may have extended
        self._known_to_exist = True

    def settings(self) -> CollectionSettings | None:
        """The settings recorded on the collection, or None when it has none (foreign layout)."""
        self._require()
        config = self._call("reading the collection's settings", self._collection.config.get)
        multi_tenant = bool(config.multi_tenancy_config.enabled)
        self._check_tenancy(multi_tenant)
        recorded = settings_from_description(config.description)
        self._vectors = VECTORS_SINGLE if recorded is None else recorded.vectors
        if recorded is None:
            return None
        # The server's factor is the truth (replica movement can change it behind our back).
        return dataclasses.replace(
            recorded,
            replication_factor=config.replication_config.factor,
            multi_tenant=multi_tenant,
        )

    def _vector_layout(self) -> str:
        """How the collection holds its vectors (stitcher.store.vectors), read once: it is fixed
        when the collection is created. A collection without settings has one vector."""
        if self._vectors is None:
            self.settings()
        assert self._vectors is not None
        return self._vectors

    def fields(self) -> dict[str, str]:
        """Filterable fields (core and metadata) with their kinds."""
        self._require()
        return dict(user_fields(self._load_extras()))

    def _load_extras(self, refresh: bool = False) -> dict[str, ExtraProperty]:
        if self._extras is None or refresh:
            config = self._call("reading the collection's schema", self._collection.config.get)
            self._references = {ref.name for ref in config.references}
            self._present = {prop.name for prop in config.properties}
            extras = {}
            for prop in config.properties:
                if prop.name in CORE_PROPERTIES:
                    continue
                kind = kind_of_property(str(prop.data_type.value), prop.tokenization)
                if kind is not None:
                    extras[prop.name] = extra_from_description(prop.name, kind, prop.description)
            self._extras = extras
        return self._extras

    def _add_properties(self, new: list[ExtraProperty]) -> None:
        from weaviate.exceptions import UnexpectedStatusCodeError

        for extra in new:
            try:
                self._collection.config.add_property(extra_property(extra))
            except UnexpectedStatusCodeError:
                # Another writer may have added it meanwhile; fail only if it is still missing.
                if extra.name not in self._load_extras(refresh=True):
                    raise
            assert self._extras is not None
            self._extras[extra.name] = extra

    def _add_missing_core_properties(self) -> None:
        """Bring a collection made by an older stitcher up to the current core layout.

        Objects stored before keep no value for the new properties (read back as None), which
        is how ingest recognises chunks made under older text rules.
        """
        from weaviate.exceptions import UnexpectedStatusCodeError

        for prop in core_properties():
            if prop.name in self._present:
                continue
            try:
                self._collection.config.add_property(prop)
            except UnexpectedStatusCodeError:
                # Another writer may have added it meanwhile; fail only if it is still missing.
                self._load_extras(refresh=True)
                if prop.name not in self._present:
                    raise
            self._present.add(prop.name)

    def _return_properties(self) -> list[str]:
        extras = self._load_extras()
        names = [name for name in CORE_PROPERTIES if name != "text_seg" and name in self._present]
        return names + sorted(extras)

    def _to_record(self, obj: Any) -> ChunkRecord:
        return properties_to_record(str(obj.uuid), obj.properties, self._load_extras())
