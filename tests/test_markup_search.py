"""On the real server: in a reST, AsciiDoc, Org and man page source file, a hard-wrapped sentence
that the chunker cuts in two comes back whole from a query on either half; and a folder with
one file of each goes through the installed script (exit 0, chunks stored).

Each file puts the sentence after structure the reader must keep (a literal block, a table, a
list) so the test also fails when that structure swallows the prose or the prose the structure.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_exit_codes import run_stitcher
from test_seed_layout import langchain_embeddings
from test_wrapped_search import assert_cut_by_chunks, assert_whole, stored_texts

from stitcher.errors import ExitStatus
from stitcher.store.weaviate import WeaviateStore

SENTENCE = (
    "When the shoulder has been browned in batches, the onions softened in the fat that is "
    "left, the pan deglazed with cider and every browned scrap scraped up from the bottom, the "
    "meat goes back into the pot with enough stock to come halfway up its sides, and the "
    "covered pot then spends three quiet hours in a low oven until a fork slides through the "
    "thickest piece without any resistance at all."
)
HALVES = (
    "shoulder browned in batches onions softened in the fat deglazed with cider",
    "covered pot spends three quiet hours in a low oven until a fork slides through",
)
ZH_SENTENCE = (
    "守护进程会在每天凌晨把前一晚生成的全部快照依次复制到第二块磁盘上，复制完成后逐个核对校验和，"
    "并删除那些已经超过配置文件中规定的保留期限的旧副本，而第一块磁盘上的原始数据始终保持不变；"
    "如果第二块磁盘在复制过程中被拔出或者空间不足，它会把尚未完成的任务记录在日志里，"
    "每隔一小时检查一次磁盘是否重新出现，等磁盘回来以后再从中断的位置继续复制，"
    "既不会重复复制已经完成的文件，也不会遗漏任何一个快照，"
    "管理员因此可以放心地在白天更换磁盘、整理目录或者调整保留期限，"
    "而不必担心夜间的备份任务会因为这些操作而失败或者产生不完整的副本。"
)
ZH_HALVES = (
    "快照依次复制到第二块磁盘上核对校验和",
    "删除超过保留期限的旧副本第一块磁盘原始数据保持不变",
)


def wrap(text: str, width: int = 72, indent: str = "") -> str:
    import textwrap

    return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent)


def wrap_zh(text: str, per_line: int = 34) -> str:
    return "\n".join(text[i : i + per_line] for i in range(0, len(text), per_line))


BRAISING = f"Braising suits the tough cuts that a butcher sells cheaply. {SENTENCE} Let it rest."

FILES = {
    "recipe.rst": (
        "Braising\n========\n\n:author: A. Cook\n\nBrown the meat first::\n\n"
        "    pan.heat(high)\n    pan.add(shoulder)\n\n"
        "=====  =======\nStep   Minutes\n=====  =======\nbrown  15\nbraise 180\n=====  =======\n\n"
        f"{wrap(BRAISING)}\n\n- Serve it hot.\n- Keep the juice.\n"
    ),
    "recipe.adoc": (
        "= Braising\nA. Cook\n:keywords: cooking\n\n[source,python]\n----\npan.heat(high)\n"
        "pan.add(shoulder)\n----\n\n|===\n|Step |Minutes\n\n|brown\n|15\n|===\n\n"
        f"{wrap(BRAISING)}\n\n* Serve it hot.\n* Keep the juice.\n"
    ),
    "recipe.org": (
        "#+TITLE: Braising\n#+FILETAGS: :cooking:\n\n* Method\n\n#+BEGIN_SRC python\n"
        "pan.heat(high)\npan.add(shoulder)\n#+END_SRC\n\n"
        "| Step  | Minutes |\n| brown |      15 |\n\n"
        f"{wrap(BRAISING)}\n\n- Serve it hot.\n- Keep the juice.\n"
    ),
    "braise.1": (
        '.TH BRAISE 1 "2024-05-01" "cook 1.0" "Kitchen Commands"\n'
        ".SH NAME\nbraise \\- cook slowly\n"
        ".SH EXAMPLE\n.nf\npan.heat(high)\npan.add(shoulder)\n.fi\n.SH DESCRIPTION\n"
        f"{wrap(BRAISING)}\n"
    ),
    "keeper.org": (
        "#+TITLE: 守护进程\n\n* 说明\n\n#+BEGIN_EXAMPLE\nkeeper run --target /mnt/second\n"
        f"#+END_EXAMPLE\n\n{wrap_zh('守护进程很简单。' + ZH_SENTENCE + '详情见下文。')}\n"
    ),
}
CASES = [
    pytest.param(name, sentence, query, id=f"{name}-{half}")
    for name in FILES
    for sentence, halves in [
        (ZH_SENTENCE, ZH_HALVES) if name == "keeper.org" else (SENTENCE, HALVES)
    ]
    for half, query in zip(("first", "second"), halves, strict=True)
]
COLLECTION = "MarkupFormats"

needs_renderer = pytest.mark.skipif(
    not (shutil.which("man") or shutil.which("groff")), reason="neither man nor groff installed"
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("markup") / "corpus"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def embeddings() -> Any:
    return langchain_embeddings()


@pytest.fixture(scope="module")
def ingested(weaviate_client: Any, corpus: Path) -> Iterator[Any]:
    from stitcher.embed import document_embedder, resolve_model
    from stitcher.ingest import ingest

    if weaviate_client.collections.exists(COLLECTION):
        weaviate_client.collections.delete(COLLECTION)
    store = WeaviateStore(weaviate_client, COLLECTION)
    model = resolve_model(None)
    embedder = document_embedder(model)
    summary = ingest(store, [str(corpus)], model_name=model.name, embedder=lambda: embedder)
    assert summary.failed == {} and len(summary.added) == len(FILES), summary
    yield store
    weaviate_client.collections.delete(COLLECTION)


@needs_renderer
@pytest.mark.parametrize(("name", "sentence", "query"), CASES)
def test_a_sentence_cut_by_chunks_comes_back_whole(
    weaviate_client: Any, ingested: Any, embeddings: Any, name: str, sentence: str, query: str
) -> None:
    from stitcher.search import SearchOptions, search

    assert_cut_by_chunks(stored_texts(weaviate_client, COLLECTION), sentence)
    result = search(ingested, query, embeddings.embed_query, SearchOptions(limit=5))
    mine = [p for p in result.passages if p.source.endswith(name)]
    passage = assert_whole(mine, sentence)
    assert "pan.heat" not in passage.text  # the code block is not glued to the prose


@needs_renderer
def test_a_folder_of_each_format_through_the_script(weaviate_server: Any, corpus: Path) -> None:
    import uuid

    name = "Markup" + uuid.uuid4().hex[:10]
    result = run_stitcher("ingest", str(corpus), "--collection", name)
    assert result.returncode == ExitStatus.OK, result.stderr
    assert f"{len(FILES)} added" in result.stdout, result.stdout
    listed = run_stitcher("search", "braised shoulder with cider", "--collection", name)
    assert listed.returncode == ExitStatus.OK, listed.stderr
    for stem in ("recipe.rst", "recipe.adoc", "recipe.org", "braise.1"):
        assert stem in listed.stdout, listed.stdout
