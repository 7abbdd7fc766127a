"""On the real server: EPUB, ODT, RTF, .eml and .mbox files, ingested, searched, and broken.

(a) A sentence longer than a chunk, in each format (English, and Chinese in four of them), is
cut by the chunker; a query on either half returns a passage that holds it whole, and that
passage is an exact slice of the stored text.
(b) Through the installed script: the same files ingest with exit 0; a broken copy of each
makes the run exit 3, names every file on stderr without a traceback, and loses none of the
chunks stored before.
"""

from __future__ import annotations

import base64
import io
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from container_files import eml, epub, mbox, odt_paragraphs, rtf_paragraphs, xhtml
from test_exit_codes import run_stitcher
from test_seed_layout import langchain_embeddings, squeeze

from stitcher.errors import ExitStatus
from stitcher.loaders import discover, load
from stitcher.store.weaviate import WeaviateStore

FERRY = (
    "When the night ferry from Penzance finally rounded the breakwater, the deckhands threw the "
    "heavy mooring lines to the harbour master's boys, who wound them around the iron bollards "
    "while the passengers, stiff from eight hours on the open water, gathered their bags and "
    "waited for the gangway to be lowered onto the slippery granite quay."
)
ORCHARD = (
    "Before the orchard could be replanted, the volunteers dug out every diseased stump, carted "
    "the roots to the bonfire at the bottom of the lane, spread two tonnes of composted manure "
    "across the terraces, and marked each new planting hole with a hazel stake painted white so "
    "the children could find them in the morning mist."
)
CLOCK = (
    "The clockmaker opened the walnut case with a thin brass key, lifted out the movement that "
    "had not ticked since the winter of the great flood, cleaned every pivot with pegwood and a "
    "drop of oil, and replaced the broken mainspring with one he had forged himself from a "
    "length of old Sheffield steel."
)
REPORTS = (
    "After the migration to the new database cluster, the nightly reports that the finance "
    "team relies on started arriving three hours late, because the export job now waits for the "
    "replication lag to drop below the threshold that we configured for the old single-node "
    "setup years ago."
)
CRANES = (
    "The volunteers who count migrating cranes along the river every autumn reported that the "
    "flocks arrived almost two weeks earlier than in any previous year on record, resting on the "
    "flooded meadows below the village before continuing south toward the wintering grounds in "
    "Spain."
)
FISHERMAN = (
    "那年秋天，住在河边小镇的老渔夫每天清晨都会划着他那条漆成蓝色的木船出发，沿着长满芦苇的河岸"
    "慢慢前行，在每一个熟悉的回水湾里撒下渔网，等待太阳升到教堂钟楼的高度时再一网一网地收起来，"
    "把捉到的鲫鱼和鲤鱼分成大小两堆，大的送到镇上的集市去卖，小的则放回河里让它们继续长大，"
    "而他自己只留下一条最瘦的鱼带回家给那只跟了他十几年、已经几乎看不见东西的老花猫当晚饭，"
    "这个习惯他坚持了整整四十年，直到他再也划不动船的那一天为止，镇上的人们说起这件事时总会"
    "露出温和的微笑，还会指给外地来的客人看那条至今仍然拴在老码头边上、油漆早已斑驳脱落的蓝色木船。"
)
DATABASE = (
    "新数据库集群上线以后，财务部门每天早上依赖的夜间报表开始推迟将近三个小时才送达，原因是导出"
    "任务现在必须等待主从复制的延迟降到我们多年前为旧的单节点环境设定的阈值以下才会启动，而这个"
    "阈值在新集群上几乎从来达不到，所以任务一直在空转等待，直到凌晨的批量写入全部结束、复制终于"
    "追上进度之后才真正开始导出数据，这导致早上九点开会时报表还没有生成，财务同事只好先用前一天"
    "的数字来做决定，我们建议尽快把阈值调整到适合新集群的数值，或者干脆改为从只读副本直接导出，"
    "同时在监控面板上为导出任务的等待时间单独加一条告警，免得下次再出问题时又要等到开会才发现。"
)
GARDEN = (
    "春天到来的时候，社区花园里的志愿者们先把冬天堆在角落里的枯枝败叶全部清理干净，再把去年秋天"
    "收集起来的厨余堆肥均匀地铺在每一块菜畦上，然后按照孩子们画的那张歪歪扭扭的种植图，在东边种"
    "上番茄和辣椒，在西边种上黄瓜和豆角，在靠近围墙的阴凉处留出一小块地方给薄荷和紫苏，最后在"
    "每一行的开头插上一块写着名字的小木牌，好让每个来帮忙浇水的邻居都知道哪一行是谁负责照看的，"
    "整个上午大家一边干活一边聊天，直到中午的太阳把泥土晒得暖洋洋的才各自回家吃饭，"
    "下午再由住在花园对面的退休老师带着几个孩子把剩下的种子分装进小纸袋，留给明年春天用。"
)
LANTERN = (
    "元宵节前一个星期，街口那家开了三十多年的灯笼铺就开始通宵赶工，老师傅先用劈得极细的竹篾扎出"
    "兔子、鲤鱼和莲花的骨架，再由他的女儿把浸过桐油的红纸一张一张地糊上去，等纸干透以后，还要用"
    "毛笔在每一盏灯上描出金色的花纹和吉祥的字样，最后装上可以换电池的小灯泡，因为现在的孩子们"
    "已经不太会用蜡烛了，铺子门口每天都排着长队，有来取预订的老主顾，也有专门从外地赶来拍照的"
    "年轻人，老师傅说只要还有人愿意提着灯笼走在街上，他就会一直把这门手艺做下去，"
    "哪怕他的手已经不像年轻时那样稳当，哪怕每年赚到的钱还抵不上铺子一个月的房租。"
)


def _lead(lang: str) -> str:
    """Sentences before the long one, so that it starts inside a paragraph."""
    if lang == "zh":
        return "这是开头的一句话，用来说明背景。后面还有一句补充说明的话。"
    return "This paragraph starts with a short sentence. Another one follows it here."


def _paragraph(sentence: str, lang: str) -> str:
    tail = "就这样。" if lang == "zh" else "That was all."
    return f"{_lead(lang)} {sentence} {tail}" if lang == "en" else _lead(lang) + sentence + tail


def _epub_file(sentence: str, lang: str) -> bytes:
    return epub(
        [
            ("one.xhtml", xhtml("<h1>One</h1><p>An opening chapter of one paragraph.</p>")),
            ("two.xhtml", xhtml(f"<h1>Two</h1><p>{_paragraph(sentence, lang)}</p>")),
        ]
    )


def _eml_file(sentence: str, lang: str) -> bytes:
    body = f"Hello,\n\n{_paragraph(sentence, lang)}\n\n-- \nA sender\n"
    if lang == "zh":
        raw = (
            "From: zhang@example.cn\nTo: li@example.cn\nSubject: =?gb2312?B?"
            + base64.b64encode("报表".encode("gbk")).decode()
            + "?=\nDate: Mon, 6 May 2024 10:12:00 +0800\nMIME-Version: 1.0\n"
            "Content-Type: text/plain; charset=gb2312\nContent-Transfer-Encoding: base64\n\n"
        ).encode("ascii")
        return raw + base64.encodebytes(body.encode("gbk"))
    return eml(body, subject="Reports", cte="quoted-printable")


def _mbox_file(sentence: str, lang: str) -> bytes:
    return mbox(
        [
            eml("A first message about something else.\n", subject="Counting"),
            eml(f"{_paragraph(sentence, lang)}\n", subject="Re: Counting"),
        ]
    )


FILES: dict[str, tuple[str, str, Callable[[str, str], bytes]]] = {
    "ferry.epub": (FERRY, "en", _epub_file),
    "orchard.odt": (ORCHARD, "en", lambda s, lang: odt_paragraphs([_paragraph(s, lang)])),
    "clock.rtf": (CLOCK, "en", lambda s, lang: rtf_paragraphs([_paragraph(s, lang)])),
    "reports.eml": (REPORTS, "en", _eml_file),
    "cranes.mbox": (CRANES, "en", _mbox_file),
    "渔夫.epub": (FISHERMAN, "zh", _epub_file),
    "花园.odt": (GARDEN, "zh", lambda s, lang: odt_paragraphs(["序言。", _paragraph(s, lang)])),
    "灯笼.rtf": (LANTERN, "zh", lambda s, lang: rtf_paragraphs([_paragraph(s, lang)])),
    "报表.eml": (DATABASE, "zh", _eml_file),
}


def halves(sentence: str, lang: str) -> tuple[str, str]:
    """A query from the sentence's first third and one from its last third."""
    if lang == "zh":
        third = len(sentence) // 3
        return sentence[:third], sentence[-third:]
    words = sentence.split()
    third = len(words) // 3
    return " ".join(words[:third]), " ".join(words[-third:])


CASES = [
    pytest.param(name, side, id=f"{name}-{side}")
    for name in FILES
    for side in ("first-half", "second-half")
]


def write_corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, (sentence, lang, build) in FILES.items():
        (root / name).write_bytes(build(sentence, lang))
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("containers") / "corpus")


@pytest.fixture(scope="module")
def ingested(weaviate_client: Any, corpus: Path) -> Iterator[WeaviateStore]:
    from stitcher.embed import document_embedder, resolve_model
    from stitcher.ingest import ingest

    name = "Containers" + uuid.uuid4().hex[:8]
    store = WeaviateStore(weaviate_client, name)
    model = resolve_model(None)
    embedder = document_embedder(model)
    summary = ingest(store, [str(corpus)], model_name=model.name, embedder=lambda: embedder)
    assert summary.failed == {} and summary.unreadable == {}, summary.one_line()
    assert len(summary.added) == len(FILES)
    yield store
    weaviate_client.collections.delete(name)


@pytest.fixture(scope="module")
def texts(corpus: Path) -> dict[str, str]:
    return {src.doc_id: load(src).text for src in discover([str(corpus)]).files}


@pytest.mark.parametrize(("name", "side"), CASES)
def test_a_sentence_cut_by_the_chunker_comes_back_whole(
    weaviate_client: Any, ingested: WeaviateStore, texts: dict[str, str], name: str, side: str
) -> None:
    from stitcher.search import SearchOptions, search

    sentence, lang, _ = FILES[name]
    doc_id = f"corpus/{name}"
    assert squeeze(sentence) in squeeze(texts[doc_id])  # the loader kept the sentence
    chunks = [
        str(o.properties["text"])
        for o in weaviate_client.collections.use(ingested.name).iterator()
        if o.properties["doc_id"] == doc_id
    ]
    assert chunks and not any(squeeze(sentence) in squeeze(chunk) for chunk in chunks)
    first, second = halves(sentence, lang)
    query = first if side == "first-half" else second
    result = search(ingested, query, langchain_embeddings().embed_query, SearchOptions(limit=3))
    found = [p for p in result.passages if squeeze(sentence) in squeeze(p.text)]
    assert found, f"no passage holds the whole sentence: {[p.text for p in result.passages]!r}"
    passage = found[0]
    assert passage.doc_id == doc_id and not passage.truncated
    assert texts[doc_id][passage.start : passage.end] == passage.text


# -- (b) through the installed script -----------------------------------------------------------


def _zip_bomb() -> bytes:
    """An .odt whose content.xml inflates to 300 MB of spaces (about 300 KB packed)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        with archive.open("content.xml", "w", force_zip64=True) as member:
            block = b" " * (1 << 20)
            for _ in range(300):
                member.write(block)
    return buffer.getvalue()


BROKEN = {
    "ferry.epub": lambda good: good[: len(good) // 2],  # cut short: no central directory
    "orchard.odt": lambda good: _zip_bomb(),
    "clock.rtf": lambda good: b"Plain text that was saved with an .rtf name.\n",
    "reports.eml": lambda good: b"Just notes, no headers.\n",
    "cranes.mbox": lambda good: good[good.find(b"\n") + 1 :],  # the first "From " line lost
}


def test_broken_files_exit_3_name_each_file_and_lose_nothing_stored(
    weaviate_server: Any, weaviate_client: Any, tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "docs")
    name = "ExitContainers" + uuid.uuid4().hex[:8]
    try:
        first = run_stitcher("ingest", str(corpus), "--collection", name)
        assert first.returncode == ExitStatus.OK, first.stderr
        assert f"{len(FILES)} added" in first.stdout
        before = _stored(weaviate_client, name)

        for file_name, breaking in BROKEN.items():
            path = corpus / file_name
            path.write_bytes(breaking(path.read_bytes()))
        second = run_stitcher("ingest", str(corpus), "--collection", name)
        assert second.returncode == ExitStatus.UNREADABLE == 3, second.stderr
        assert f"{len(BROKEN)} unreadable" in second.stdout
        assert "Traceback" not in second.stderr
        errors = [line for line in second.stderr.splitlines() if line.startswith("error:")]
        for file_name in BROKEN:
            assert any(file_name in line for line in errors), (file_name, second.stderr)
        assert any("zip bomb" in line for line in errors), second.stderr
        assert _stored(weaviate_client, name) == before
    finally:
        if weaviate_client.collections.exists(name):
            weaviate_client.collections.delete(name)


def _stored(client: Any, name: str) -> set[tuple[str, str]]:
    """(doc_id, chunk text) of every stored chunk."""
    return {
        (str(o.properties["doc_id"]), str(o.properties["text"]))
        for o in client.collections.use(name).iterator()
    }
