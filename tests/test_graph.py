"""Graph metadata (seed 000): entities, mentions as references, filters that follow them.

Pure parts (names, files, graph, resolution, paths) run without a server. The rest runs the
CLI against the real server on datasets/news, and checks every answer against the set computed
here, independently, from the dataset's own files.
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from stitcher.errors import FilterError, LoadError, UsageError
from stitcher.filters import Condition, Where
from stitcher.graph import (
    AmbiguousEntity,
    Entity,
    Resolver,
    UnknownEntity,
    name_key,
    news_conditions,
    org_condition,
    parse_path,
    read_entities,
    sentiment_condition,
)
from stitcher.graph.model import build_graph, content_hash, entity_uuid
from stitcher.models import ChunkRecord
from stitcher.store.weaviate.entities import EntityStore
from tests.fakes import FakeEmbedder

NEWS = Path(__file__).resolve().parent.parent / "datasets" / "news"


# --- the dataset, read independently of stitcher ---------------------------------------------


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


ORGS = jsonl(NEWS / "organizations.jsonl")
PEOPLE = jsonl(NEWS / "people.jsonl")


def front_matter(path: Path) -> dict[str, Any]:
    match = re.match(r"---\n(.*?)\n---\n", path.read_text("utf-8"), re.DOTALL)
    assert match, path
    meta = yaml.safe_load(match.group(1))
    assert isinstance(meta, dict)
    return meta


ARTICLES = {f"articles/{p.name}": front_matter(p) for p in sorted((NEWS / "articles").glob("*.md"))}
ORG_BY_NAME = {n: o["id"] for o in ORGS for n in [o["name"], *o["aliases"]]}


def mentioned_orgs(meta: dict[str, Any]) -> set[str]:
    return {ORG_BY_NAME[name] for name in meta["mentions"]}


def articles_where(test: Any) -> set[str]:
    return {doc for doc, meta in ARTICLES.items() if test(meta)}


ROD_BOARDS = {b for p in PEOPLE if p["name"] == "Rod Johnson" for b in p["board_member_of"]}
FRENCH = {o["id"] for o in ORGS if o["country"] == "France"}
HYUNDAI_SUPPLIERS = {o["id"] for o in ORGS if "hyundai-motor" in o["supplier_of"]}

ROD_REMOTE_WORK = articles_where(
    lambda m: "remote-work" in m["tags"] and mentioned_orgs(m) & ROD_BOARDS
)
FRANCE_NEGATIVE = articles_where(lambda m: m["sentiment"] < -0.5 and mentioned_orgs(m) & FRENCH)
HYUNDAI_SUPPLIER_NEWS = articles_where(lambda m: mentioned_orgs(m) & HYUNDAI_SUPPLIERS)
HYUNDAI_SUPPLY_CHAIN = articles_where(
    lambda m: "supply-chain" in m["tags"] and mentioned_orgs(m) & HYUNDAI_SUPPLIERS
)


def test_the_dataset_answers_agree_with_the_rules_computed_here() -> None:
    answers = json.loads((NEWS / "answers.json").read_text("utf-8"))
    assert set(answers["rod_johnson_remote_work"]["articles"]) == ROD_REMOTE_WORK
    assert set(answers["negative_news_france"]["articles"]) == FRANCE_NEGATIVE
    assert set(answers["hyundai_supplier_news"]["articles"]) == HYUNDAI_SUPPLIER_NEWS
    assert set(answers["hyundai_supplier_news"]["supply_chain_articles"]) == HYUNDAI_SUPPLY_CHAIN
    assert ROD_REMOTE_WORK and FRANCE_NEGATIVE and HYUNDAI_SUPPLY_CHAIN


# --- names, files, graph (no server) --------------------------------------------------------


def test_name_key_ignores_case_accents_width_and_spacing() -> None:
    assert name_key("Atelier Numérique") == name_key("  atelier   NUMERIQUE ")
    assert name_key("ＡＴＥＬＩＥＲ Numérique") == "atelier numerique"
    assert name_key("罗德·约翰逊") == "罗德·约翰逊"
    assert name_key("현대자동차") == "현대자동차"  # Hangul survives the accent stripping
    assert name_key("Rod Johnson") != name_key("Ruth Johnson")


@given(st.text(max_size=30))
def test_name_key_is_idempotent(text: str) -> None:
    assert name_key(name_key(text)) == name_key(text)


def test_read_entities_from_the_dataset_files() -> None:
    orgs = read_entities(NEWS / "organizations.jsonl")
    people = read_entities(NEWS / "people.jsonl")
    assert len(orgs) == len(ORGS) and {e.kind for e in orgs} == {"organization"}
    assert {e.kind for e in people} == {"person"}
    sorel = next(e for e in orgs if e.id == "sorel-composites")
    assert sorel.attributes == {"city": "Grenoble", "country": "France", "industry": "composites"}
    assert sorel.links == {"supplier_of": ("hyundai-motor", "rhenwald")}
    assert sorel.aliases == ("Sorel", "索雷尔复合材料")
    rod = next(e for e in people if e.name == "Rod Johnson")
    assert set(rod.links["board_member_of"]) == ROD_BOARDS


def test_read_entities_from_csv_with_kind_column_and_list_cells(tmp_path: Path) -> None:
    path = tmp_path / "graph.csv"
    path.write_text(
        "kind,id,name,aliases,country,supplier_of,board_member_of,founded\n"
        "organization,acme,Acme Corp,Acme|艾克米,France,globex,,1950\n"
        "organization,globex,Globex,,United States,,,\n"
        'person,p1,Jane Roe,"[""罗伊""]",,,acme;globex,\n',
        "utf-8",
    )
    acme, globex, jane = read_entities(path)
    assert (acme.kind, acme.aliases, acme.attributes) == (
        "organization",
        ("Acme", "艾克米"),
        {"country": "France"},
    )
    assert acme.links == {"supplier_of": ("globex",)} and acme.extra == {"founded": "1950"}
    assert globex.links == {} and globex.aliases == ()
    assert jane.kind == "person" and jane.aliases == ("罗伊",)
    assert jane.links == {"board_member_of": ("acme", "globex")}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("things.jsonl", '{"id": "x", "name": "X"}\n', "kind"),
        ("orgs.jsonl", '{"id": "x"}\n', "no `name`"),
        ("orgs.jsonl", '{"id": "x", "name": "X"}\n{"id": "x", "name": "Y"}\n', "line 1"),
        ("orgs.jsonl", "not json\n", "orgs.jsonl:1"),
        ("people.jsonl", '{"id": "p", "name": "P", "supplier_of": ["x"]}\n', "person links"),
    ],
)
def test_bad_entity_files_name_file_and_line(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    with pytest.raises(LoadError, match=re.escape(message)):
        read_entities(path)


def test_graph_stores_every_link_in_both_directions_and_reports_dangling_ones() -> None:
    graph = build_graph(read_entities(NEWS / "organizations.jsonl"))
    hyundai = graph.references[("organization", "hyundai-motor")]
    assert {i for _k, i in hyundai["supplier"]} == HYUNDAI_SUPPLIERS
    assert graph.references[("organization", "sorel-composites")]["supplier_of"] == (
        ("organization", "hyundai-motor"),
        ("organization", "rhenwald"),
    )
    assert not graph.dangling
    people_only = build_graph(read_entities(NEWS / "people.jsonl"))
    assert len(people_only.dangling) == sum(len(p["board_member_of"]) for p in PEOPLE)
    full = build_graph(
        read_entities(NEWS / "organizations.jsonl") + read_entities(NEWS / "people.jsonl")
    )
    boards = full.references[("organization", "northwind-analytics")]["board_member"]
    assert ("person", "p-rod-johnson") in boards


def test_content_hash_and_uuid_are_deterministic() -> None:
    one = read_entities(NEWS / "organizations.jsonl")[0]
    assert content_hash(one, {}) == content_hash(one, {})
    assert content_hash(one, {}) != content_hash(one, {"supplier": (("organization", "x"),)})
    assert entity_uuid("news", "organization", "a") == entity_uuid("News", "organization", "a")
    assert entity_uuid("News", "organization", "a") != entity_uuid("News", "person", "a")


def resolver() -> Resolver:
    return Resolver(read_entities(NEWS / "organizations.jsonl"))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Hyundai", "hyundai-motor"),
        ("现代汽车", "hyundai-motor"),
        ("atelier numerique", "atelier-numerique"),
        ("Northwnd Analytics", "northwind-analytics"),  # a typo
        ("Saffron Med", "saffron-media"),  # part of a name
    ],
)
def test_forgiving_lookup_finds_one_organization(query: str, expected: str) -> None:
    assert resolver().one(query).id == expected


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("motor", {"Hyundai Motor", "Kestrel Motors"}),
        ("汽车", {"Hyundai Motor", "Yuanhang Auto", "Kestrel Motors", "Rhenwald Automobilwerke"}),
    ],
)
def test_ambiguous_lookup_lists_the_candidates(query: str, names: set[str]) -> None:
    with pytest.raises(AmbiguousEntity) as caught:
        resolver().one(query)
    assert set(caught.value.candidates) == names
    assert caught.value.exit_status == 2
    for name in names:
        assert name in str(caught.value)


def test_unknown_lookup_says_so() -> None:
    with pytest.raises(UnknownEntity, match="no organization named 'Neo4j'"):
        resolver().one("Neo4j")


def test_strict_resolution_of_mentions_takes_exact_names_only() -> None:
    r = resolver()
    entity = r.resolve("Garonne Transport")
    assert entity is not None and entity.id == "transports-garonne"
    assert r.resolve("Garonne") is None  # a part is not a mention of it
    shared = Resolver(
        [
            Entity("organization", "a", "Alpha", ("AX",)),
            Entity("organization", "b", "Beta", ("AX",)),
        ]
    )
    assert shared.resolve("AX") is None


@pytest.mark.parametrize(
    ("field", "links", "kind", "end"),
    [
        ("mentions.country", (), "organization", "country"),
        ("mentions.board_member.name", ("board_member",), "person", "name"),
        ("mentions.supplier_of", ("supplier_of",), "organization", "name"),
        ("mentions.investor.board_member.id", ("investor", "board_member"), "person", "id"),
    ],
)
def test_paths_parse(field: str, links: tuple[str, ...], kind: str, end: str) -> None:
    path = parse_path(field)
    assert (path.links, path.kind, path.field) == (links, kind, end)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("mentions.countri", "fields id, name, city, country, industry"),
        ("mentions.board_member.country", "a person has fields id, name"),
        ("author.name", "dotted fields follow the `mentions`"),
        ("mentions.supplier.supplier.supplier.supplier.name", "at most 3"),
    ],
)
def test_bad_paths_list_what_is_valid(field: str, message: str) -> None:
    with pytest.raises(FilterError, match=re.escape(message)):
        parse_path(field)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("m.json", '{"articles/a.md": ["Acme", "艾克米"], "b.md": ["Globex"]}'),
        (
            "m.jsonl",
            '{"doc": "articles/a.md", "mentions": ["Acme"]}\n'
            '{"doc": "articles/a.md", "mentions": ["艾克米"]}\n'
            '{"doc": "b.md", "mentions": "Globex"}\n',
        ),
        ("m.csv", "doc,mention\narticles/a.md,Acme\narticles/a.md,艾克米\nb.md,Globex\n"),
    ],
)
def test_mentions_files_in_three_formats(tmp_path: Path, name: str, text: str) -> None:
    from stitcher.graph import mentions_for, read_mentions_file

    path = tmp_path / name
    path.write_text(text, "utf-8")
    mapping = read_mentions_file(path)
    assert mapping == {"articles/a.md": ("Acme", "艾克米"), "b.md": ("Globex",)}
    assert mentions_for("news/articles/a.md", "/x/news/articles/a.md", mapping) == [
        "Acme",
        "艾克米",
    ]
    assert mentions_for("news/articles/b.md", "b.md", mapping) == ["Globex"]
    assert mentions_for("news/articles/ab.md", "ab.md", mapping) == []  # no partial names


def test_ingest_adds_mapped_mentions_to_front_matter_ones(tmp_path: Path) -> None:
    from stitcher.ingest import IngestOptions, ingest
    from stitcher.store.memory import MemoryStore
    from tests.fakes import FakeEmbedder

    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("---\nmentions: [Acme]\n---\nAcme 与 Globex 签约。\n", "utf-8")
    (root / "b.md").write_text("Nothing to see.\n", "utf-8")
    store, embedder = MemoryStore("m"), FakeEmbedder()
    options = IngestOptions(mentions={"a.md": ("Globex", "Acme")})
    ingest(store, [str(root)], model_name=embedder.name, embedder=lambda: embedder, options=options)
    by_doc = {r.doc_id: r.metadata.get("mentions") for r in store.sample()}
    assert by_doc == {"docs/a.md": ["Acme", "Globex"], "docs/b.md": None}


def test_sentiment_maps_to_the_seed_thresholds() -> None:
    assert sentiment_condition("positive") == Condition("sentiment", "gt", 0.5)
    assert sentiment_condition("Negative") == Condition("sentiment", "lt", -0.5)
    with pytest.raises(UsageError):
        sentiment_condition("meh")


def test_memory_store_follows_references_at_query_time() -> None:
    from stitcher.models import CollectionSettings
    from stitcher.store.memory import MemoryStore

    store = MemoryStore("m")
    store.create(CollectionSettings("m", 2, 250, 50))
    record = ChunkRecord("1", "d", "h", 0, 0, 1, "x", "d", "c", 1, None, {"mentions": ["A"]})
    store.write([record], [[1.0, 0.0]])
    assert store.heads(Where((Condition("mentions", "eq", "A"),)))  # raw names still filter
    france = Where((Condition("mentions.country", "eq", "France"),))
    with pytest.raises(FilterError, match="no links to entities"):
        store.heads(france)
    store.entities().load([Entity("organization", "a", "A", (), {"country": "Germany"})])
    assert store.heads(france) == []
    # Loaded later, as `stitcher entities load` re-links stored chunks: the next query sees it.
    store.entities().load([Entity("organization", "a", "A", (), {"country": "France"})])
    assert [r.id for r in store.heads(france)] == ["1"]


# --- both stores: the dataset's questions through the library -------------------------------


@pytest.fixture(
    scope="module", params=["memory", pytest.param("weaviate", marks=pytest.mark.integration)]
)
def news_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, FakeEmbedder]]:
    """The news dataset in a store of each kind: entities loaded, then the articles ingested
    (doc ids articles/...) through the library, with the fake embedder (the filters decide
    what comes back: every test asks for more results than match)."""
    from stitcher.graph.model import KINDS, entity_collection
    from stitcher.ingest import IngestOptions, ingest

    root = tmp_path_factory.mktemp("news_store")
    shutil.copytree(NEWS / "articles", root / "articles")
    name = "NewsStore" + uuid.uuid4().hex[:8]
    client = None
    if request.param == "memory":
        from stitcher.store.memory import MemoryStore

        store: Any = MemoryStore(name)
    else:
        from stitcher.store.weaviate import WeaviateStore

        client = request.getfixturevalue("weaviate_client")
        store = WeaviateStore(client, name)
    store.entities().load(
        read_entities(NEWS / "organizations.jsonl") + read_entities(NEWS / "people.jsonl")
    )
    embedder = FakeEmbedder()
    ingest(
        store,
        [str(root / "articles")],
        model_name=embedder.name,
        embedder=lambda: embedder,
        options=IngestOptions(),
    )
    yield store, embedder
    if client is not None:
        store.drop()
        for kind in KINDS:
            client.collections.delete(entity_collection(store.name, kind))


def found_in(
    news_store: tuple[Any, FakeEmbedder],
    query: str | None,
    all_of: Sequence[str] = (),
    any_of: Sequence[str] = (),
) -> set[str]:
    """Doc ids of up to 200 unstitched results: the newest (no query) or a hybrid search."""
    from stitcher.search import SearchOptions, latest, search
    from stitcher.where import parse_where

    store, embedder = news_store
    options = SearchOptions(limit=200, stitch=False, where=parse_where(all_of, any_of) or None)
    if query is None:
        result = latest(store, options)
    else:
        result = search(store, query, embedder.embed_query, options)
    return {p.doc_id for p in result.passages}


@pytest.mark.parametrize("query", [None, "remote work policy", "远程办公政策"])
def test_rod_johnson_boards_that_announced_remote_work(
    news_store: tuple[Any, FakeEmbedder], query: str | None
) -> None:
    found = found_in(
        news_store, query, ['mentions.board_member.name="Rod Johnson"', "tags=remote-work"]
    )
    assert found == ROD_REMOTE_WORK


@pytest.mark.parametrize("query", [None, "employee happiness", "裁员"])
def test_negative_news_about_companies_in_france(
    news_store: tuple[Any, FakeEmbedder], query: str | None
) -> None:
    found = found_in(news_store, query, ["mentions.country=france", "sentiment<-0.5"])
    assert found == FRANCE_NEGATIVE


@pytest.mark.parametrize("supplier", ["Hyundai", "现代汽车", "Hyundai Motor"])
def test_news_about_suppliers_of_hyundai(
    news_store: tuple[Any, FakeEmbedder], supplier: str
) -> None:
    found = found_in(news_store, None, [f"mentions.supplier_of.name={supplier}"])
    assert found == HYUNDAI_SUPPLIER_NEWS
    narrowed = found_in(
        news_store,
        "supply chain problems",
        [f"mentions.supplier_of={supplier}", "tags=supply-chain"],
    )
    assert narrowed == HYUNDAI_SUPPLY_CHAIN


ORG_BY_ID = {o["id"]: o for o in ORGS}


@pytest.mark.parametrize(
    ("where", "test"),
    [
        (["mentions.country=France,Germany"], lambda o: o["country"] in ("France", "Germany")),
        (["mentions.name~motor"], lambda o: o["id"] in ("hyundai-motor", "kestrel-motors")),
        (["mentions.city=paris"], lambda o: o["city"] == "Paris"),
        (["mentions.industry=auto parts"], lambda o: o["industry"] == "auto parts"),
        (
            ["mentions.investor=Harbor Pine"],
            lambda o: o["id"] in ORG_BY_ID["harbor-pine"]["invested_in"],
        ),
        (["mentions.supplier.name=Sorel"], lambda o: "sorel-composites" in _suppliers_of(o["id"])),
    ],
)
def test_operators_along_references(
    news_store: tuple[Any, FakeEmbedder], where: list[str], test: Any
) -> None:
    expected = articles_where(lambda m: any(test(ORG_BY_ID[i]) for i in mentioned_orgs(m)))
    assert expected
    assert found_in(news_store, None, where) == expected


def _suppliers_of(org_id: str) -> set[str]:
    return {o["id"] for o in ORGS if org_id in o["supplier_of"]}


def test_where_any_mixes_paths_and_fields(news_store: tuple[Any, FakeEmbedder]) -> None:
    found = found_in(news_store, None, any_of=["mentions.country=Japan", "tags=recall"])
    assert found == articles_where(
        lambda m: (
            "recall" in m["tags"]
            or any(ORG_BY_ID[i]["country"] == "Japan" for i in mentioned_orgs(m))
        )
    )


# --- the real server ------------------------------------------------------------------------


def run(capsys: Any, *args: str) -> tuple[int, str, str]:
    """`stitcher ARGS` through the CLI's own error handling (exit codes, messages)."""
    import stitcher.cli

    code = stitcher.cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def news(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The news dataset: entities loaded, then the articles ingested (doc ids articles/...)."""
    root = tmp_path_factory.mktemp("news")
    shutil.copytree(NEWS / "articles", root / "articles")
    name = "News" + uuid.uuid4().hex[:8]
    capsys = _NoCapture()
    orgs, people = str(NEWS / "organizations.jsonl"), str(NEWS / "people.jsonl")
    assert run(capsys, "entities", "load", orgs, people, "-c", name)[0] == 0
    assert run(capsys, "ingest", str(root / "articles"), "-c", name)[0] == 0
    return name


class _NoCapture:
    """Stands in for capsys in a module fixture (output goes to the terminal)."""

    def readouterr(self) -> Any:
        return type("Captured", (), {"out": "", "err": ""})()


def doc_ids(out: Any) -> set[str]:
    return {r["doc_id"] for r in out["results"]}


def search(capsys: pytest.CaptureFixture[str], name: str, *args: str) -> set[str]:
    return doc_ids(run_json(capsys, "search", *args, "-c", name, "-k", "200", "--no-stitch"))


@pytest.mark.integration
def test_latest_without_topic_is_newest_first(
    news: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run_json(
        capsys, "search", "--latest", "-c", news, "-k", "3", "-w", "mentions.country=France"
    )
    dates = [r["date"] for r in out["results"]]
    french = sorted(
        (str(m["date"]) for d, m in ARTICLES.items() if mentioned_orgs(m) & FRENCH), reverse=True
    )
    assert [d[:10] for d in dates] == french[:3]


@pytest.mark.integration
def test_agent_arguments_map_to_the_same_filters(
    news: str, weaviate_client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from stitcher.api import Stitcher

    conditions = news_conditions(
        EntityStore(weaviate_client, news), country="France", sentiment="negative"
    )
    with Stitcher(collection=news) as s:
        passages = s.search(None, limit=200, where=Where(conditions), latest=True, stitch=False)
    assert {p.doc_id for p in passages} == FRANCE_NEGATIVE
    northwind = org_condition(EntityStore(weaviate_client, news), "northwind")
    assert northwind == Condition("mentions.id", "eq", "northwind-analytics")
    with Stitcher(collection=news) as s:
        passages = s.search(None, limit=200, where=Where((northwind,)), latest=True, stitch=False)
    assert {p.doc_id for p in passages} == articles_where(
        lambda m: "northwind-analytics" in mentioned_orgs(m)
    )


@pytest.mark.integration
def test_ambiguous_organization_exits_2_with_the_candidates(
    news: str, weaviate_client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(AmbiguousEntity) as caught:
        org_condition(EntityStore(weaviate_client, news), "Motor")
    assert set(caught.value.candidates) == {"Hyundai Motor", "Kestrel Motors"}
    code, _out, err = run(capsys, "entities", "show", "Motor", "-c", news)
    assert code == 2
    assert "Hyundai Motor" in err and "Kestrel Motors" in err and "ambiguous" in err


@pytest.mark.integration
def test_unknown_organization_says_so(
    news: str, weaviate_client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UnknownEntity, match="Neo4j"):
        org_condition(EntityStore(weaviate_client, news), "Neo4j")
    code, _out, err = run(capsys, "entities", "show", "Neo4j", "-c", news)
    assert code == 2 and "no entity named 'Neo4j'" in err


@pytest.mark.integration
def test_show_prints_links_both_ways_and_mentions(
    news: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(capsys, "entities", "show", "现代汽车", "-c", news)
    assert data["id"] == "hyundai-motor" and data["country"] == "South Korea"
    assert {t["id"] for t in data["links"]["supplier"]} == HYUNDAI_SUPPLIERS
    assert set(data["mentioned_in"]) == articles_where(
        lambda m: "hyundai-motor" in mentioned_orgs(m)
    )
    rod = run_json(capsys, "entities", "show", "Rod Johnson", "-c", news)
    assert {t["id"] for t in rod["links"]["board_member_of"]} == ROD_BOARDS


@pytest.mark.integration
def test_bad_paths_and_operators_are_readable_errors(
    news: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, "search", "--latest", "-c", news, "-w", "mentions.ceo=x")
    assert code == 2 and "unknown field 'ceo'" in err and "board_member" in err
    code, _out, err = run(capsys, "search", "--latest", "-c", news, "-w", "mentions.name>x")
    assert code == 2 and "only =, ~ and a,b lists" in err


@pytest.mark.integration
def test_reloading_entities_and_reingesting_change_nothing(
    news: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    orgs, people = str(NEWS / "organizations.jsonl"), str(NEWS / "people.jsonl")
    report = run_json(capsys, "entities", "load", orgs, people, "-c", news)
    assert report["created"] == [] and report["updated"] == []
    assert report["unchanged"] == len(ORGS) + len(PEOPLE)
    assert report["chunks_relinked"] == 0 and report["unresolved_mentions"] == {}
    root = tmp_path / "again"
    shutil.copytree(NEWS / "articles", root / "articles")
    # Another folder of the same name is another source unless named: re-attach it.
    summary = run_json(capsys, "ingest", str(root / "articles"), "-c", news, "--source", "articles")
    assert summary["unchanged"] == len(ARTICLES) and summary["chunks_written"] == 0
    found = search(
        capsys, news, "--latest", "-w", "mentions.country=France", "-w", "sentiment<-0.5"
    )
    assert found == FRANCE_NEGATIVE


@pytest.fixture
def small(weaviate_server: Any, tmp_path: Path) -> dict[str, Any]:
    """A collection of its own for tests that change entities."""
    return {"name": "Graph" + uuid.uuid4().hex[:8], "root": tmp_path}


def write_doc(root: Path, name: str, mentions: list[str], text: str) -> None:
    front = f"---\ntitle: {name}\ndate: 2024-01-01\nmentions: {json.dumps(mentions)}\n---\n"
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / f"{name}.md").write_text(front + text + "\n", "utf-8")


@pytest.mark.integration
def test_unresolved_mentions_are_reported_kept_and_linked_later(
    small: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    name, root = small["name"], small["root"]
    orgs = root / "organizations.jsonl"
    orgs.write_text(
        json.dumps({"id": "bluefin", "name": "Bluefin Logistics", "aliases": ["Bluefin"],
                    "country": "United States"}) + "\n",
        "utf-8",
    )  # fmt: skip
    run_json(capsys, "entities", "load", str(orgs), "-c", name)
    write_doc(root, "a", ["Bluefin", "Bluefin Freight"], "Bluefin Logistics opened a depot.")
    write_doc(root, "b", ["Bluefin Freight"], "蓝鳍货运宣布在西雅图扩建仓库。")
    summary = run_json(capsys, "ingest", str(root / "docs"), "-c", name)
    assert summary["unresolved_mentions"] == {
        "docs/a.md": ["Bluefin Freight"],
        "docs/b.md": ["Bluefin Freight"],
    }
    assert search(capsys, name, "--latest", "-w", "mentions.id=bluefin") == {"docs/a.md"}
    assert search(capsys, name, "--latest", "-w", "mentions=Bluefin Freight") == {
        "docs/a.md",
        "docs/b.md",
    }

    # Adding the alias links the stored chunks without re-ingesting.
    orgs.write_text(
        orgs.read_text("utf-8").replace('["Bluefin"]', '["Bluefin", "Bluefin Freight"]')
    )
    report = run_json(capsys, "entities", "load", str(orgs), "-c", name)
    assert report["updated"] == ["organization:bluefin"] and report["chunks_relinked"] >= 1
    assert report["unresolved_mentions"] == {}
    assert search(capsys, name, "--latest", "-w", "mentions.name=Bluefin Freight") == {
        "docs/a.md",
        "docs/b.md",
    }

    # Renaming the alias moves resolution with it.
    orgs.write_text(orgs.read_text("utf-8").replace("Bluefin Freight", "Bluefin Cargo"))
    report = run_json(capsys, "entities", "load", str(orgs), "-c", name)
    assert report["unresolved_mentions"] == {
        "docs/a.md": ["Bluefin Freight"],
        "docs/b.md": ["Bluefin Freight"],
    }
    assert search(capsys, name, "--latest", "-w", "mentions.id=bluefin") == {"docs/a.md"}
    assert search(capsys, name, "--latest", "-w", "mentions.name=Bluefin Cargo") == {"docs/a.md"}
    code, _out, err = run(capsys, "entities", "show", "Bluefin Freight", "-c", name)
    assert code == 2 and "no entity named" in err


@pytest.mark.integration
def test_search_org_flag_filters_and_asks_when_ambiguous(
    news: str, capsys: pytest.CaptureFixture[str]
) -> None:
    found = search(capsys, news, "--latest", "--org", "northwind")
    assert found == articles_where(lambda m: "northwind-analytics" in mentioned_orgs(m))
    code, _out, err = run(capsys, "search", "--latest", "-c", news, "--org", "Motor")
    assert code == 2 and "Hyundai Motor" in err and "Kestrel Motors" in err
    code, _out, err = run(capsys, "search", "--latest", "-c", news, "--org", "Neo4j")
    assert code == 2 and "Neo4j" in err


@pytest.mark.integration
def test_agent_tool_takes_the_seeds_news_arguments(news: str) -> None:
    from stitcher.api import Stitcher
    from stitcher.langchain import StitchedRetriever

    with Stitcher(collection=news) as s:
        tool = StitchedRetriever(stitcher=s, k=20).as_tool()
        schema = tool.args_schema.model_json_schema()  # type: ignore[union-attr]
        assert {"organization", "country", "sentiment"} <= set(schema["properties"])
        answer = tool.invoke({"country": "France", "sentiment": "negative", "limit": 20})
        titles = {ARTICLES[doc_id]["title"] for doc_id in FRANCE_NEGATIVE}
        assert titles and all(t in answer for t in titles)
        follow_up = tool.invoke({"organization": "Motor"})
        assert "follow up question" in follow_up and "Kestrel Motors" in follow_up
        unknown = tool.invoke({"organization": "Neo4j"})
        assert "Neo4j" in unknown and "Traceback" not in unknown
