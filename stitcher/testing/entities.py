"""The contract of entities and the filters that follow references to them
(`EntityLinking`)."""

from __future__ import annotations

import pytest

from stitcher.errors import FilterError
from stitcher.filters import Condition, Where
from stitcher.graph import AmbiguousEntity, UnknownEntity, org_condition
from stitcher.graph.model import MENTIONED_KIND, Entity
from stitcher.store.base import ChunkStore
from stitcher.testing.cases import GRAPH_CASES, GRAPH_DOCS, GRAPH_ENTITIES, C
from stitcher.testing.kit import StoreFixtures, filtered, one_chunk, write_ok


class EntityLinkingContract(StoreFixtures):
    """Entities, and filters that follow the references to them (`EntityLinking`)."""

    def test_entities_load_and_resolve_by_name_and_alias(self, created: ChunkStore) -> None:
        entities = created.entities()
        assert entities.collection == created.name
        assert not entities.exists(MENTIONED_KIND)
        loaded = [
            Entity("organization", "acme", "Acme Corporation", ("ACME",), {"country": "France"}),
            Entity("organization", "kestrel", "Kestrel Motors", (), {"country": "Korea"}),
            Entity("person", "ada", "Ada Lovelace"),
        ]
        entities.load(loaded)
        assert entities.exists(MENTIONED_KIND) and entities.exists("person")
        assert {e.id for e in entities.entities([MENTIONED_KIND])} == {"acme", "kestrel"}
        assert entities.resolver(MENTIONED_KIND).one("acme").id == "acme"
        assert entities.resolver(MENTIONED_KIND).one("Kestrel").id == "kestrel"
        assert org_condition(entities, "Acme Corporation") == Condition("mentions.id", "eq", "acme")
        with pytest.raises(UnknownEntity):
            org_condition(entities, "Nobody Inc")

    def test_an_entity_is_shown_with_its_links_both_ways(self, created: ChunkStore) -> None:
        entities = created.entities()
        entities.load(GRAPH_ENTITIES)
        view = entities.show("kestrel motors")
        assert view.entity.id == "kestrel"
        assert [e.id for e in view.links["supplier"]] == ["acme"]
        assert [e.id for e in entities.show("Acme", "organization").links["supplier_of"]] == [
            "kestrel"
        ]
        with pytest.raises(AmbiguousEntity):
            entities.show("Twin")
        with pytest.raises(UnknownEntity):
            entities.show("Nobody Inc")

    def test_unresolved_mentions_are_taken_once(self, created: ChunkStore) -> None:
        created.entities().load(GRAPH_ENTITIES)
        write_ok(created, one_chunk("nobody", "news nobody", mentions=["Nobody", "Kestrel Motors"]))
        # A store that links mentions names the one it could not link; one that keeps them as
        # text only (the in-memory store) links none and so names none.
        assert created.take_unresolved_mentions() in ({}, {"nobody": ["Nobody"]})
        assert created.take_unresolved_mentions() == {}

    @pytest.fixture
    def graph_store(self, created: ChunkStore) -> ChunkStore:
        """Organizations and a person linked to them, then one chunk per document mentioning
        them (entities first: a store links mentions to the entities it holds)."""
        created.entities().load(GRAPH_ENTITIES)
        for doc_id, mentions in GRAPH_DOCS.items():
            metadata = {"mentions": mentions, "lang": "en"} if mentions else {"lang": "zh"}
            write_ok(created, one_chunk(doc_id, f"news {doc_id}", **metadata))
        return created

    def test_filters_follow_references_to_entities(self, graph_store: ChunkStore) -> None:
        for where, expected in GRAPH_CASES:
            assert filtered(graph_store, where) == expected, where
            heads = graph_store.heads(where, limit=50)
            assert {record.doc_id for record in heads} == expected, where

    def test_not_equal_along_references_means_some_entity_differs(
        self, graph_store: ChunkStore
    ) -> None:
        # Weaviate's meaning: an organization without a country differs from France too.
        found = filtered(graph_store, Where((C("mentions.country", "ne", "France"),)))
        assert found == {"korea", "nimbus", "both"}

    def test_reference_filters_refuse_bad_operators_and_unlinked_collections(
        self, created: ChunkStore
    ) -> None:
        write_ok(created, one_chunk("plain", "no entities here", mentions=["Acme"]))
        with pytest.raises(FilterError, match="no links to entities"):
            filtered(created, Where((C("mentions.country", "eq", "France"),)))
        with pytest.raises(FilterError, match="unknown field 'ceo'"):
            filtered(created, Where((C("mentions.ceo", "eq", "x"),)))
        with pytest.raises(FilterError, match=r"only =, ~ and a,b lists"):
            filtered(created, Where((C("mentions.name", "gt", "x"),)))
        with pytest.raises(FilterError, match="at least one value"):
            filtered(created, Where((C("mentions.country", "any", []),)))
