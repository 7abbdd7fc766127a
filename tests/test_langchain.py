"""The LangChain retriever and agent tool, on the real Weaviate server with the real model, and
the tool's own logic (its schema, filters and messages) on the in-memory store.

One corpus per module (city articles in English and Chinese, plus news stories with tags, dates
and a numeric sentiment), ingested once into each store; the server's collection is dropped at
the end.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import StructuredTool
from langchain_tests.integration_tests import RetrieversIntegrationTests

from stitcher.api import Stitcher
from stitcher.errors import FilterError
from stitcher.filters import Condition, Where
from stitcher.langchain import (
    StitchedRetriever,
    build_args_schema,
    date_bound,
    format_documents,
    passage_document,
    stitched_search_tool,
    tool_where,
)
from stitcher.models import ChunkRecord, Passage, SpanRequest
from stitcher.request import SearchRequest
from stitcher.search import SearchResult

REPO = Path(__file__).resolve().parent.parent
CITIES = REPO / "samples" / "cities"
NEWS = REPO / "datasets" / "news" / "articles"

#: One sentence longer than a chunk in each language: chunking must cut it, stitching rejoin it.
LONG_SENTENCES = {
    "en": (
        "When the spring tide pushes up the creeks in the grey hour before dawn, carrying silt "
        "from the estuary, seeds of glasswort and sea lavender and the shells of drowned crabs, "
        "the wardens walk the sea wall with their notebooks and count the wading birds that rise "
        "from the mud, the redshank first, then the curlews, then the great wheeling flocks of "
        "knot that turn silver and dark as one body above the water, until the last flock "
        "settles on the far bank."
    ),
    "zh": (
        "每当春潮在黎明前灰蒙蒙的时刻涌进潮沟，带来河口的淤泥、海蓬子和补血草的种子、溺亡螃蟹的"
        "空壳以及偶尔漂来的渔网浮子，护林员们就带着笔记本沿着海堤慢慢行走，一边听着远处航道上货轮"
        "低沉的汽笛声，一边清点从泥滩上惊飞起来的各种涉禽，先是成对的红脚鹬，然后是弯着长嘴的白腰"
        "杓鹬，接着是灰斑鸻和黑腹滨鹬，最后是成千上万只盘旋的红腹滨鹬，它们在水面上空像一个整体一样"
        "忽明忽暗地翻转，时而收拢成一团浓烟，时而散开成一张银色的大网，直到最后一群鸟在远岸的草滩上"
        "落定、潮水开始退去、太阳从堤外的芦苇丛后面升起来，护林员们才合上笔记本回家吃早饭。"
    ),
}
#: A fragment from the second half of each long sentence, to search for.
LONG_QUERIES = {
    "en": "great wheeling flocks of knot turn silver and dark above the water",
    "zh": "成千上万只盘旋的红腹滨鹬忽明忽暗地翻转",
}
MARSH_TITLES = {"en": "Saltmarsh", "zh": "盐沼"}
MARSH = {
    "en": "The marsh floods twice a day. {long} The counts go to the county trust every month. "
    "Nobody has missed a spring tide in eleven years.",
    "zh": "盐沼每天被潮水淹没两次。{long}每个月的记录都会交给郡里的自然信托。"
    "十一年来，没有人错过一次大潮。",
}

#: Unique per run, so a crashed run's leftovers never meet the next run.
COLLECTION = f"LangchainTest{uuid.uuid4().hex[:8]}"


def _front_matter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    return dict(yaml.safe_load(text.split("---", 2)[1]))


def _news_files() -> list[Path]:
    """Every remote-work policy story (2020-2023) and the other stories of 2021."""
    chosen = []
    for path in sorted(NEWS.glob("*.md")):
        meta = _front_matter(path)
        if "policy" in meta["tags"] or str(meta["date"]).startswith("2021"):
            chosen.append(path)
    return chosen


def _write_corpus(root: Path) -> None:
    """samples/cities, some news and the marsh in two languages, under `root`."""
    shutil.copytree(CITIES, root / "cities")
    (root / "news").mkdir()
    for path in _news_files():
        shutil.copy(path, root / "news" / path.name)
    (root / "marsh").mkdir()
    for lang, title in MARSH_TITLES.items():
        body = MARSH[lang].format(long=LONG_SENTENCES[lang])
        front = f"---\ntitle: {title}\ndate: 2022-06-01\ntags: [nature]\nlang: {lang}\n---\n\n"
        (root / "marsh" / f"marsh.{lang}.md").write_text(front + body + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def corpus(weaviate_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """COLLECTION holding samples/cities and some news; yields the ingested folder."""
    root = tmp_path_factory.mktemp("langchain-corpus")
    _write_corpus(root)
    with Stitcher(collection=COLLECTION) as stitcher:
        summary = stitcher.ingest([str(root)])
        assert not summary.failed, summary
    try:
        yield root
    finally:
        with Stitcher(collection=COLLECTION) as stitcher:
            stitcher.drop()


@pytest.fixture(scope="module")
def stitcher(corpus: Path) -> Iterator[Stitcher]:
    with Stitcher(collection=COLLECTION) as opened:
        yield opened


def _meta_by_source(root: Path) -> dict[str, dict[str, Any]]:
    return {
        path.name: _front_matter(path)
        for path in [*root.glob("news/*.md"), *root.glob("cities/*"), *root.glob("marsh/*")]
    }


# -- the retriever against the real collection ---------------------------------------------------


def test_documents_hold_stitched_passages_and_their_metadata(stitcher: Stitcher) -> None:
    retriever = stitcher.as_retriever(k=3, where=["country=France"])
    assert isinstance(retriever, StitchedRetriever)
    documents = retriever.invoke("silk workshops of the nineteenth century")
    assert documents, "the Lyon article should match"
    for document in documents:
        meta = document.metadata
        assert meta["country"] == "France"
        assert meta["title"] == "Lyon"
        assert meta["tags"] == ["city"]
        assert meta["date"].startswith("2023-09-12")
        datetime.fromisoformat(meta["date"])  # an ISO string, not a datetime
        assert meta["path"].endswith(("lyon.md", "lyon.zh.md"))
        assert 0 <= meta["start"] < meta["end"]
        assert meta["end"] - meta["start"] == len(document.page_content)
        assert meta["hit_ids"] and all(isinstance(i, str) for i in meta["hit_ids"])
        assert isinstance(meta["score"], float)
        assert meta["truncated"] is False
    assert "silk" in documents[0].page_content


def _chunks_of(stitcher: Stitcher, title: str, lang: str) -> list[ChunkRecord]:
    where = Where((Condition("title", "eq", title), Condition("lang", "eq", lang)))
    [head] = stitcher.store.heads(where)
    return stitcher.store.fetch_spans([SpanRequest(head.doc_id, head.doc_hash, 0, 10**9)])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sentence_cut_by_chunking_comes_back_whole(stitcher: Stitcher, lang: str) -> None:
    sentence = LONG_SENTENCES[lang]
    chunks = _chunks_of(stitcher, MARSH_TITLES[lang], lang)
    assert not any(sentence in chunk.text for chunk in chunks), "chunking should cut it"
    retriever = StitchedRetriever(stitcher=stitcher, k=1, where=[f"lang={lang}"])
    [document] = retriever.invoke(LONG_QUERIES[lang])
    assert document.metadata["title"] == MARSH_TITLES[lang]
    assert sentence in document.page_content
    assert document.metadata["truncated"] is False
    hits = stitcher.store.fetch(document.metadata["hit_ids"])
    assert hits and all(sentence not in hit.text for hit in hits)


def test_chinese_query_with_a_language_filter(stitcher: Stitcher) -> None:
    retriever = stitcher.as_retriever(k=2, where=["lang=zh"])
    documents = retriever.invoke("都江堰水利工程")
    assert documents
    assert all(d.metadata["lang"] == "zh" for d in documents)
    assert documents[0].metadata["path"].endswith("chengdu.zh.md")
    assert (
        "两千多年前修建的都江堰水利工程至今仍在灌溉这片土地，使这里成为人们口中的“天府之国”。"
        in (documents[0].page_content)
    )


# -- the standard LangChain retriever tests -----------------------------------------------------


@pytest.mark.usefixtures("corpus")
@pytest.mark.asyncio
@pytest.mark.filterwarnings("ignore:The test <Function test_.*asyncio:pytest.PytestWarning")
class TestStandardRetriever(RetrieversIntegrationTests):
    """langchain-tests' own suite: k in the constructor and in invoke, sync and async."""

    @property
    def retriever_constructor(self) -> type[StitchedRetriever]:
        return StitchedRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"collection": COLLECTION, "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "what is the food like in the city?"


def test_invoke_arguments_override_k_and_add_filters(stitcher: Stitcher) -> None:
    retriever = stitcher.as_retriever(k=5, where="tags=policy")
    documents = retriever.invoke("remote work", k=2, where=["date>=2021-01-01", "date<2022-01-01"])
    assert len(documents) == 2
    for document in documents:
        assert "policy" in document.metadata["tags"]
        assert document.metadata["date"].startswith("2021")


def test_empty_query_lists_the_newest_documents(stitcher: Stitcher, corpus: Path) -> None:
    retriever = stitcher.as_retriever(k=3, where=["tags=policy"])
    documents = retriever.invoke("")
    dates = [d.metadata["date"][:10] for d in documents]
    assert dates == ["2023-12-30", "2022-11-11", "2022-04-27"]


def test_unknown_invoke_argument_is_refused(stitcher: Stitcher) -> None:
    with pytest.raises(TypeError, match="filter"):
        stitcher.as_retriever().invoke("remote work", filter={"tags": "policy"})


def test_unknown_field_is_a_clear_error(stitcher: Stitcher) -> None:
    with pytest.raises(FilterError, match="colour"):
        stitcher.as_retriever(where=["colour=red"]).invoke("remote work")


@pytest.mark.asyncio
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_chain_and_ainvoke_return_stitched_documents(stitcher: Stitcher, lang: str) -> None:
    retriever = StitchedRetriever(stitcher=stitcher, k=2, where=[f"lang={lang}"])
    chain = retriever | RunnableLambda(format_documents)
    text = await chain.ainvoke(LONG_QUERIES[lang])
    assert text.startswith("[1] ")
    assert f"title: {MARSH_TITLES[lang]}" in text
    assert LONG_SENTENCES[lang] in text
    documents = await retriever.ainvoke(LONG_QUERIES[lang])
    assert all(isinstance(d, Document) for d in documents)
    assert LONG_SENTENCES[lang] in documents[0].page_content
    assert chain.invoke(LONG_QUERIES[lang]) == text


def test_retriever_from_a_collection_name_opens_and_closes_its_own_connection(
    corpus: Path,
) -> None:
    retriever = StitchedRetriever(collection=COLLECTION, k=1)
    assert retriever.invoke("Montreal French-speaking island")[0].metadata["title"] == "Montreal"
    own = retriever.get_stitcher()
    assert own.collection == COLLECTION
    retriever.close()
    assert own._client is None


# -- the agent tool against the real collection --------------------------------------------------


@pytest.fixture(scope="module")
def memory_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Stitcher]:
    """The same folder in the in-memory store (fake embedder): the tool's own logic (its
    schema, filters, messages) needs no server."""
    from stitcher.ingest import ingest
    from stitcher.store.memory import MemoryStore
    from tests.fakes import FakeEmbedder

    root = tmp_path_factory.mktemp("langchain-memory")
    _write_corpus(root)
    store = MemoryStore(COLLECTION)
    summary = ingest(store, [str(root)], model_name=FakeEmbedder.name, embedder=FakeEmbedder)
    assert summary.added and not summary.failed
    return root, Stitcher(collection=COLLECTION, store=store, query_embedder=FakeEmbedder())


@pytest.fixture(scope="module")
def tool_corpus(memory_corpus: tuple[Path, Stitcher]) -> Path:
    return memory_corpus[0]


@pytest.fixture(scope="module")
def tool(memory_corpus: tuple[Path, Stitcher]) -> StructuredTool:
    return stitched_search_tool(memory_corpus[1])


def _call(tool: StructuredTool, **args: Any) -> ToolMessage:
    """Invoke the tool the way an agent runtime does: with a tool call from the model."""
    message = tool.invoke({"name": tool.name, "args": args, "id": "call-1", "type": "tool_call"})
    assert isinstance(message, ToolMessage)
    assert isinstance(message.content, str)
    assert "Traceback" not in message.content
    return message


def _sources(answer: str) -> list[str]:
    return [Path(s).name for s in re.findall(r"^\[\d+\] (\S+)", answer, re.M)]


def test_tool_schema_lists_the_collections_fields_with_types(
    tool: StructuredTool, tool_corpus: Path
) -> None:
    properties = tool.tool_call_schema.model_json_schema()["properties"]
    assert {"query", "latest", "limit", "filters"} <= set(properties)
    for name in ("tags", "country", "lang", "title", "source", "doc_id", "mentions"):
        types = {option.get("type") for option in properties[name]["anyOf"]}
        assert {"string", "array"} <= types, name
    for name in ("date_min", "date_max"):
        assert {"string"} <= {o.get("type") for o in properties[name]["anyOf"]}
        assert "YYYY" in properties[name]["description"]
    for name in ("sentiment_min", "sentiment_max"):
        assert "number" in {o.get("type") for o in properties[name]["anyOf"]}
    for name in ("page_min", "page_max"):
        assert "integer" in {o.get("type") for o in properties[name]["anyOf"]}
    # Chunk positions mean nothing to an agent; the text is what `query` searches.
    assert not {"start_min", "chunk_index_min", "text"} & set(properties)
    # The examples are sampled from the stored values (which ones depends on the random UUIDs),
    # so check that they are real countries of this corpus, not which ones were picked.
    examples = re.findall(r"'([^']+)'", properties["country"]["description"].split("Examples:")[1])
    countries = {str(m["country"]) for m in _meta_by_source(tool_corpus).values() if "country" in m}
    assert examples and set(examples) <= countries, (examples, countries)
    assert tool.name == f"search_{COLLECTION.lower()}"


def test_tool_filters_on_tags_and_a_year(tool: StructuredTool, tool_corpus: Path) -> None:
    answer = _call(
        tool, query="new remote work policy", tags="policy", date_min="2021", date_max="2021"
    ).content
    assert isinstance(answer, str)
    filters = re.search(r"\(filters: (.*)\):", answer)
    assert filters, answer[:200]
    assert set(filters.group(1).split(", ")) == {
        "tags=policy",
        "date>=2021-01-01",
        "date<2022-01-01",
    }
    meta = _meta_by_source(tool_corpus)
    sources = _sources(answer)
    assert sources
    for source in sources:
        assert "policy" in meta[source]["tags"]
        assert str(meta[source]["date"]).startswith("2021")


def test_tool_without_query_returns_the_latest(tool: StructuredTool) -> None:
    answer = str(_call(tool, tags=["policy"], limit=2).content)
    assert _sources(answer) == ["112-en-remote-work.md", "090-zh-remote-work.md"]
    assert "date: 2023-12-30" in answer


def test_tool_number_range_and_any_of_list(tool: StructuredTool, tool_corpus: Path) -> None:
    answer = str(
        _call(
            tool, query="staff", lang=["zh"], sentiment_min=0.0, tags=["policy", "earnings"]
        ).content
    )
    meta = _meta_by_source(tool_corpus)
    sources = _sources(answer)
    assert sources
    for source in sources:
        assert meta[source]["lang"] == "zh"
        assert meta[source]["sentiment"] >= 0.0
        assert {"policy", "earnings"} & set(meta[source]["tags"])


def test_tool_chinese_query(tool: StructuredTool) -> None:
    answer = str(_call(tool, query="远程办公政策", lang="zh", limit=2).content)
    assert _sources(answer)
    assert all("-zh-" in s for s in _sources(answer))


def test_tool_free_form_filters(tool: StructuredTool, tool_corpus: Path) -> None:
    answer = str(_call(tool, query="city", filters=["country!=China", "tags=city"]).content)
    meta = _meta_by_source(tool_corpus)
    assert _sources(answer)
    assert all(meta[s]["country"] != "China" for s in _sources(answer))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"query": "x", "author": "Li"}, "unknown argument 'author'"),
        ({"query": "x", "date_min": "March 2021"}, "date_min='March 2021' is not a date"),
        ({"query": "x", "date_max": "2021-13"}, "is not a date"),
        ({"query": "x", "filters": ["date => 2021"]}, "unknown operator"),
        ({"query": "x", "filters": ["tags contains policy"]}, "cannot read filter"),
        ({"query": "x", "filters": ["colour=red"]}, "unknown field 'colour'"),
        ({"query": "x", "filters": ["sentiment>very"]}, "does not fit field 'sentiment'"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "sentiment_min": "high"}, "sentiment_min"),
    ],
)
def test_tool_bad_arguments_come_back_as_messages(
    tool: StructuredTool, args: dict[str, Any], expected: str
) -> None:
    message = _call(tool, **args)
    assert expected in str(message.content)
    assert str(message.content).startswith("Error")
    assert message.status == "error"


@pytest.mark.asyncio
async def test_tool_async_and_from_the_retriever(stitcher: Stitcher) -> None:
    tool = stitcher.as_retriever(k=2, where=["lang=en"]).as_tool(name="city_search")
    assert tool.name == "city_search"
    answer = await tool.ainvoke({"query": "laneways and arcades", "country": "Australia"})
    assert "(filters: lang=en, country=Australia)" in answer
    assert set(_sources(answer)) == {"melbourne.md"}


# -- pure logic, no server -----------------------------------------------------------------------


@dataclass(frozen=True)
class FakeField:
    name: str
    kind: str
    examples: tuple[str, ...] = ()


FAKE_FIELDS = [
    FakeField("tags", "text[]", ("policy", "earnings")),
    FakeField("date", "date", ("2021-04-18T00:00:00+00:00",)),
    FakeField("rating", "number"),
    FakeField("page", "int"),
    FakeField("reviewed", "bool"),
    FakeField("作者", "text", ("李明",)),
    FakeField("limit", "int"),
]


def _bound(text: str, upper: bool) -> datetime:
    condition = date_bound("date", text, upper=upper)
    assert condition.op == ("lt" if upper else "ge")
    return datetime.fromisoformat(condition.value)


@given(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9998, 12, 31)))
def test_a_year_month_or_day_bound_covers_exactly_that_period(moment: datetime) -> None:
    moment = moment.replace(tzinfo=timezone.utc)
    for text in (f"{moment.year:04d}", f"{moment:%Y-%m}", f"{moment:%Y-%m-%d}"):
        assert _bound(text, upper=False) <= moment < _bound(text, upper=True)
    before = _bound(f"{moment.year:04d}", upper=False).replace(year=moment.year - 1)
    assert not before >= _bound(f"{moment.year:04d}", upper=False)


def test_date_bounds_of_a_year_and_full_timestamps() -> None:
    assert date_bound("date", "2021", upper=True) == Condition(
        "date", "lt", "2022-01-01T00:00:00+00:00"
    )
    assert date_bound("date", "2021-12", upper=True).value == "2022-01-01T00:00:00+00:00"
    assert date_bound("date", "2021-02-28", upper=True).value == "2021-03-01T00:00:00+00:00"
    stamp = "2021-03-04T10:00:00+08:00"
    assert date_bound("date", stamp, upper=True) == Condition("date", "le", stamp)
    for bad in ("March 2021", "2021-02-30", "21", ""):
        with pytest.raises(FilterError, match="is not a date"):
            date_bound("date", bad, upper=False)


def test_schema_has_typed_arguments_and_safe_names() -> None:
    schema, arguments = build_args_schema(FAKE_FIELDS, default_limit=4)
    properties = schema.model_json_schema()["properties"]
    assert "'policy'" in properties["tags"]["description"]
    assert "2021-04-18" in properties["date_min"]["description"]
    assert {o.get("type") for o in properties["rating_min"]["anyOf"]} == {"number", "null"}
    assert {o.get("type") for o in properties["page_max"]["anyOf"]} == {"integer", "null"}
    assert {o.get("type") for o in properties["reviewed"]["anyOf"]} == {"boolean", "null"}
    assert properties["limit"]["default"] == 4
    # A field named like a tool argument, and a non-ASCII one, get safe distinct names.
    assert arguments["field_limit_min"].field == "limit"
    [chinese] = [name for name, a in arguments.items() if a.field == "作者"]
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", chinese)
    assert "作者" in properties[chinese]["description"]
    with pytest.raises(Exception, match="Extra inputs"):
        schema.model_validate({"colour": "red"})


def test_tool_arguments_become_conditions() -> None:
    _, arguments = build_args_schema(FAKE_FIELDS)
    known = {f.name: f.kind for f in FAKE_FIELDS}
    where = tool_where(
        {
            "query": "ignored",
            "tags": ["policy", "earnings"],
            "date_min": "2021",
            "rating_max": 4.5,
            "reviewed": False,
            "filters": ["page!=3"],
        },
        arguments,
        known,
    )
    assert where == Where(
        (
            Condition("tags", "any", ("policy", "earnings")),
            Condition("date", "ge", "2021-01-01T00:00:00+00:00"),
            Condition("rating", "le", 4.5),
            Condition("reviewed", "eq", False),
            Condition("page", "ne", "3"),
        )
    )


def test_passage_becomes_a_document_with_json_metadata() -> None:
    passage = Passage(
        text="整句话。",
        source="/home/u/docs/a.md",
        doc_id="docs/a.md",
        score=0.5,
        hit_ids=("id-1",),
        chunk_ids=("id-0", "id-1"),
        start=10,
        end=14,
        truncated=True,
        metadata={
            "date": datetime(2021, 4, 18, tzinfo=timezone.utc),
            "tags": ("x",),
            "source": "front matter loses",
        },
    )
    document = passage_document(passage)
    assert document.page_content == "整句话。"
    assert document.metadata == {
        "source": "docs",  # the source name, as `--where source=docs` matches it
        "path": "/home/u/docs/a.md",
        "doc_id": "docs/a.md",
        "start": 10,
        "end": 14,
        "score": 0.5,
        "hit_ids": ["id-1"],
        "chunk_ids": ["id-0", "id-1"],
        "truncated": True,
        "date": "2021-04-18T00:00:00+00:00",
        "tags": ["x"],
    }


class BlockingStitcher(Stitcher):
    """Its search blocks until the event loop has run a coroutine in the meantime."""

    def __init__(self) -> None:
        super().__init__(collection="Nowhere")
        self.loop_ran = threading.Event()

    def run(self, request: SearchRequest) -> SearchResult:
        if not self.loop_ran.wait(timeout=30):
            raise AssertionError("the event loop was blocked while searching")
        passage = Passage(
            f"about {request.query}.", "s.md", "s.md", 1.0, ("h",), ("h",), 0, 5, False
        )
        return SearchResult(request.query or "", [passage], 0.0, 1)


@pytest.mark.asyncio
async def test_ainvoke_does_not_block_the_event_loop() -> None:
    stitcher = BlockingStitcher()
    retriever = StitchedRetriever(stitcher=stitcher)

    async def other_work() -> None:
        await asyncio.sleep(0)
        stitcher.loop_ran.set()

    documents, _ = await asyncio.gather(retriever.ainvoke("tea"), other_work())
    assert [d.page_content for d in documents] == ["about tea."]


def test_malformed_where_fails_when_the_retriever_is_built() -> None:
    with pytest.raises(FilterError, match="cannot read filter"):
        StitchedRetriever(collection="Anything", where=["tags is policy"])
    with pytest.raises(ValueError, match="either"):
        StitchedRetriever(stitcher=Stitcher(collection="Anything"), url="http://x:8080")
