"""The search path's embedder: the model exported once to ONNX, run with onnxruntime.

A fresh `stitcher search` process must answer within seconds, and importing torch alone takes
~10 s. So the first ingest exports the transformer to ONNX (torch needed only then) and writes
next to it everything else the query path needs: the model's own `tokenizers` tokenizer and a
small JSON spec of its pooling, normalisation, length limit and prompts. OnnxEmbedder then
rebuilds exactly what sentence-transformers computes with onnxruntime + numpy.
"""

from __future__ import annotations

import contextlib
import glob
import inspect
import json
import os
import re
import shutil
import sys
import tempfile
import warnings
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stitcher import config
from stitcher.embed.models import SENTENCE_TRANSFORMERS, ModelRef, model_fingerprint
from stitcher.embed.st import embedding_dimension, load_sentence_transformer
from stitcher.errors import ModelError

if TYPE_CHECKING:
    import numpy as np

# numpy, onnx, onnxruntime, tokenizers and filelock load native code or asyncio (numpy ~100 ms,
# onnxruntime ~150 ms, filelock ~60 ms), and torch takes seconds; each is imported by the
# function that needs it, so resolving a model or reading an export's spec stays instant.

#: Bump when the export layout or spec changes, so old exports are ignored, not misread.
EXPORT_FORMAT = 1
SPEC_FILE = "stitcher_onnx.json"
MODEL_FILE = "model.onnx"
#: The model's weights, stored next to MODEL_FILE rather than inside it: onnxruntime then maps
#: them from the file instead of parsing and copying a 90 MB protobuf, which halves the time a
#: fresh `stitcher search` spends opening the model. Exports made before hold them inline.
WEIGHTS_FILE = "model.onnx.data"
TOKENIZER_FILE = "tokenizer.json"

#: Pooling modes OnnxEmbedder implements, in the order sentence-transformers concatenates them.
POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")

#: An export is only kept if it reproduces sentence-transformers this closely on sample texts.
MIN_EXPORT_COSINE = 0.9999

_VERIFY_TEXTS = (
    "Hello world.",
    "  Leading and trailing spaces, UPPER case and numbers 12345.  ",
    "向量数据库把文本切成小块，然后为每一块计算嵌入向量。",
    "中英混合 mixed text：Weaviate 的 hybrid search 结合了 BM25 和向量检索。",
    "A long text that must be truncated. " * 80,
    "很长的中文文本需要被截断。" * 60,
)

# Counts real exports (not cache hits) so tests can prove idempotence.
_EXPORTS_RUN = 0


def export_root(cache_dir: Path | None = None) -> Path:
    """Directory holding all ONNX exports: <cache_dir>/onnx (default from stitcher.config)."""
    return (cache_dir if cache_dir is not None else config.cache_dir()) / "onnx"


def export_key(model: ModelRef) -> str:
    """Directory name of a model's export: readable model name + fingerprint of its files."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", model.name).strip("._-")[-60:] or "model"
    return f"{readable}-{model_fingerprint(model)}-v{EXPORT_FORMAT}"


def onnx_export_dir(model: ModelRef, *, cache_dir: Path | None = None) -> Path | None:
    """The complete ONNX export of this exact model, or None. Never imports torch."""
    directory = export_root(cache_dir) / export_key(model)
    if _is_complete(directory):
        return directory
    return None


def export_onnx(model: ModelRef, *, cache_dir: Path | None = None) -> Path:
    """Export the model to ONNX once; later calls return the existing export.

    Atomic (built in a temporary directory, then renamed) and safe when several processes
    export at once (a file lock; the loser finds the winner's export). The export is checked
    against sentence-transformers on sample texts before it is kept.

    Args:
        model: A resolved model.
        cache_dir: Cache root; default stitcher.config.cache_dir().

    Returns:
        The export directory (model.onnx, tokenizer.json, stitcher_onnx.json).

    Raises:
        ModelError: The model has parts the ONNX path does not implement, or the export does
            not reproduce sentence-transformers. Searches then keep using sentence-transformers.
    """
    from filelock import FileLock, Timeout

    if model.engine != SENTENCE_TRANSFORMERS:
        raise ModelError(
            f"{model.name} runs on its own {model.engine} engine without torch: "
            "it needs no ONNX export"
        )
    existing = onnx_export_dir(model, cache_dir=cache_dir)
    if existing is not None:
        return existing
    root = export_root(cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    key = export_key(model)
    final = root / key
    try:
        with FileLock(str(root / f"{key}.lock"), timeout=900):
            if _is_complete(final):  # another process finished while we waited
                return final
            tmp = Path(tempfile.mkdtemp(prefix=f".{key}.tmp-", dir=root))
            tmp.chmod(0o755)  # mkdtemp makes it private; the export is a shared cache
            try:
                _export_into(model, tmp)
                if final.exists():  # a leftover without a spec file is garbage
                    shutil.rmtree(final)
                os.replace(tmp, final)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    except Timeout as exc:
        raise ModelError(
            f"another process has been exporting {model.name} to ONNX for 15 minutes; "
            f"if none is running, delete {root / (key + '.lock')}"
        ) from exc
    return final


def embeds_on_cpu(device: str) -> bool:
    """Whether a `device` setting means the CPU, known without importing torch: `cpu`, or `auto`
    on a machine with no GPU device node (NVIDIA's or ROCm's) and no Apple GPU. When in doubt it
    answers False, and torch decides."""
    if device == "cpu":
        return True
    if device != "auto" or sys.platform == "darwin":
        return False
    return not (glob.glob("/dev/nvidia[0-9]*") or Path("/dev/kfd").exists())


def export_embedder(
    model: ModelRef,
    batch_size: int = 32,
    *,
    device: str = "auto",
    threads: int | None = None,
    cache_dir: Path | None = None,
) -> OnnxEmbedder | None:
    """The embedder that ingest uses on the CPU once the model is exported: the export, run
    with `threads` threads (default: up to 4). None when `device` may mean a GPU, when there is
    no export yet, or when it cannot be opened — then sentence-transformers embeds, with the
    same vectors (an export is kept only if it reproduces them, see `_verify`)."""
    if not embeds_on_cpu(device):
        return None
    export_dir = onnx_export_dir(model, cache_dir=cache_dir)
    if export_dir is None:
        return None
    try:
        return OnnxEmbedder(export_dir, batch_size, threads=threads)
    except ModelError:
        return None


def exports_run() -> int:
    """How many exports this process actually performed (for tests and diagnostics)."""
    return _EXPORTS_RUN


def _is_complete(directory: Path) -> bool:
    # The spec file is written last, so its presence means the export is whole.
    return all((directory / name).is_file() for name in (SPEC_FILE, MODEL_FILE, TOKENIZER_FILE))


def _export_into(model: ModelRef, target: Path) -> None:
    global _EXPORTS_RUN
    st_model = load_sentence_transformer(model)
    spec = _describe(model, st_model)
    transformer = st_model[0]
    tokenizer = transformer.tokenizer
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ModelError(
            f"{model.name} has no fast (tokenizers) tokenizer, so it cannot be exported to ONNX; "
            "searches will load sentence-transformers instead"
        )
    backend.save(str(target / TOKENIZER_FILE))
    spec["inputs"] = _trace_to_onnx(transformer, tokenizer, target / MODEL_FILE)
    spec["pad_id"] = int(tokenizer.pad_token_id) if tokenizer.pad_token_id is not None else 0
    spec["pad_token"] = str(tokenizer.pad_token) if tokenizer.pad_token is not None else "[PAD]"
    _write_json(target / (SPEC_FILE + ".draft"), spec)
    _verify(model, st_model, target)
    os.replace(target / (SPEC_FILE + ".draft"), target / SPEC_FILE)
    _EXPORTS_RUN += 1


def _describe(model: ModelRef, st_model: Any) -> dict[str, Any]:
    """What happens after the transformer, read from the loaded modules (what torch runs)."""
    modules = list(st_model)
    kinds = [type(module).__name__ for module in modules]
    unsupported = [kind for kind in kinds[1:] if kind not in ("Pooling", "Normalize")] + (
        [kinds[0]] if kinds and kinds[0] != "Transformer" else []
    )
    if unsupported or "Pooling" not in kinds:
        raise ModelError(
            f"{model.name} has modules the ONNX search path does not implement "
            f"({', '.join(unsupported) or 'no Pooling'}); searches will load sentence-transformers"
        )
    if getattr(st_model, "truncate_dim", None):
        raise ModelError(f"{model.name} truncates embeddings, which the ONNX path does not do")
    pooling = modules[kinds.index("Pooling")]
    modes = _pooling_modes(pooling)
    normalize = "Normalize" in kinds
    if normalize:
        norm = modules[kinds.index("Normalize")]
        if getattr(norm, "module_input_name", "sentence_embedding") != "sentence_embedding":
            raise ModelError(f"{model.name} normalises token embeddings; the ONNX path cannot")
    prompts: dict[str, str] = dict(getattr(st_model, "prompts", {}) or {})
    default_name = getattr(st_model, "default_prompt_name", None)
    default_prompt = prompts.get(default_name, "") if default_name else ""
    query_prompt = prompts.get("query", default_prompt)
    document_prompt = next(
        (prompts[name] for name in ("document", "passage", "corpus") if name in prompts),
        default_prompt,
    )
    if (query_prompt or document_prompt) and not getattr(pooling, "include_prompt", True):
        raise ModelError(f"{model.name} excludes its prompt from pooling; not supported by ONNX")
    transformer = modules[0]
    max_seq_length = st_model.max_seq_length or transformer.tokenizer.model_max_length
    return {
        "format": EXPORT_FORMAT,
        "model": model.name,
        "source": model.path,
        "fingerprint": model_fingerprint(model),
        "dimension": embedding_dimension(st_model),
        "pooling": modes,
        "normalize": normalize,
        "max_seq_length": int(max_seq_length),
        "query_max_length": int(getattr(transformer, "query_length", None) or max_seq_length),
        "document_max_length": int(getattr(transformer, "document_length", None) or max_seq_length),
        "query_prompt": query_prompt,
        "document_prompt": document_prompt,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _pooling_modes(pooling: Any) -> list[str]:
    mode = getattr(pooling, "pooling_mode", None)
    if mode is not None:  # sentence-transformers >= 6: a name or a tuple of names
        modes = [mode] if isinstance(mode, str) else list(mode)
    else:  # older releases: one boolean attribute per mode
        modes = [m for m in POOLING_MODES if getattr(pooling, f"pooling_mode_{_legacy(m)}", False)]
    unknown = [m for m in modes if m not in POOLING_MODES]
    if unknown or not modes:
        raise ModelError(f"pooling mode {unknown or modes} is not supported by the ONNX path")
    return modes


def _legacy(mode: str) -> str:
    return {
        "cls": "cls_token",
        "max": "max_tokens",
        "mean": "mean_tokens",
        "weightedmean": "weightedmean_tokens",
        "lasttoken": "lasttoken",
    }.get(mode, mode)


def _trace_to_onnx(transformer: Any, tokenizer: Any, path: Path) -> list[str]:
    import torch

    auto_model = transformer.auto_model
    accepted = set(inspect.signature(auto_model.forward).parameters)
    # Two texts of different length: the traced graph must see real padding, or transformers
    # may drop the attention mask as "all ones" and bake that into the graph.
    sample = tokenizer(
        ["short", "a noticeably longer sample sentence, 这是中文"],
        padding=True,
        truncation=True,
        return_tensors="pt",
    )
    input_names: list[str] = [
        name
        for name in ("input_ids", "attention_mask", "token_type_ids")
        if name in sample and name in accepted
    ]
    device = next(auto_model.parameters()).device
    tensors = tuple(sample[name].to(device) for name in input_names)

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.auto_model = auto_model

        def forward(self, *inputs: Any) -> Any:
            output = self.auto_model(
                **dict(zip(input_names, inputs, strict=True)), return_dict=True
            )
            return output.last_hidden_state

    axes = {name: {0: "batch", 1: "sequence"} for name in [*input_names, "token_embeddings"]}
    was_training = auto_model.training
    auto_model.eval()
    try:
        with torch.no_grad(), warnings.catch_warnings():
            # The TorchScript exporter is deprecated but needs no onnxscript; its tracer warnings
            # concern shapes, which the verification step checks for real.
            warnings.simplefilter("ignore")
            torch.onnx.export(
                TokenEmbeddings(),
                tensors,
                str(path),
                input_names=input_names,
                output_names=["token_embeddings"],
                dynamic_axes=axes,
                opset_version=17,
                do_constant_folding=True,
                dynamo=False,
            )
    except Exception as exc:
        raise ModelError(f"ONNX export failed: {type(exc).__name__}: {exc}") from exc
    finally:
        auto_model.train(was_training)
    _store_weights_apart(path, path.parent)
    return input_names


def _store_weights_apart(model_path: Path, work_dir: Path) -> None:
    """Rewrite an ONNX model so its weights live in WEIGHTS_FILE beside it (see there).

    Both files are written in a fresh folder under `work_dir` and moved into place weights
    first, so a reader sees either the old inline model or the new pair, never half of one.
    """
    import onnx

    model = onnx.load(str(model_path))
    staging = Path(tempfile.mkdtemp(prefix=".weights-", dir=work_dir))
    try:
        onnx.save_model(
            model,
            str(staging / MODEL_FILE),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=WEIGHTS_FILE,
            size_threshold=1024,
        )
        for name in (WEIGHTS_FILE, MODEL_FILE):
            (staging / name).chmod(0o644)  # a shared cache, like the rest of the export
            os.replace(staging / name, model_path.parent / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _verify(model: ModelRef, st_model: Any, export_dir: Path) -> None:
    import numpy as np

    onnx_embedder = OnnxEmbedder(export_dir, spec_file=SPEC_FILE + ".draft")
    texts = list(_VERIFY_TEXTS)
    encode_doc = getattr(st_model, "encode_document", st_model.encode)
    encode_query = getattr(st_model, "encode_query", st_model.encode)
    pairs = [
        (
            np.asarray(encode_doc(texts, show_progress_bar=False)),
            np.asarray(onnx_embedder.embed_documents(texts)),
        ),
        (
            np.asarray(encode_query(texts[:3], show_progress_bar=False)),
            np.asarray([onnx_embedder.embed_query(t) for t in texts[:3]]),
        ),
    ]
    for expected, actual in pairs:
        cosine = _rowwise_cosine(expected, actual)
        if float(cosine.min()) < MIN_EXPORT_COSINE:
            raise ModelError(
                f"the ONNX export of {model.name} does not reproduce sentence-transformers "
                f"(cosine {float(cosine.min()):.5f}); searches will load sentence-transformers"
            )


def _rowwise_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.asarray((a * b).sum(axis=1) / np.maximum(norms, 1e-12))


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


class OnnxEmbedder:
    """Embedder running an export made by export_onnx: onnxruntime + tokenizers + numpy only.

    Attributes:
        calls: How many embed_documents/embed_query calls were made (including empty ones).
        embedded: How many texts were embedded in total.
    """

    def __init__(
        self,
        export_dir: Path | str,
        batch_size: int = 32,
        *,
        spec_file: str = SPEC_FILE,
        threads: int | None = None,
    ) -> None:
        self.export_dir = Path(export_dir)
        spec_path = self.export_dir / spec_file
        try:
            self.spec: dict[str, Any] = json.loads(spec_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"unreadable ONNX export spec {spec_path}: {exc}") from exc
        if self.spec.get("format") != EXPORT_FORMAT:
            raise ModelError(
                f"ONNX export {self.export_dir} has format {self.spec.get('format')}, "
                f"expected {EXPORT_FORMAT}: delete it and run `stitcher model export`"
            )
        self.name: str = self.spec["model"]
        self.dimension: int = int(self.spec["dimension"])
        self.batch_size = batch_size
        self.calls = 0
        self.embedded = 0
        self._session = _open_session(self.export_dir / MODEL_FILE, threads)
        self._input_names: list[str] = list(self.spec["inputs"])
        self._tokenizer = _open_tokenizer(
            self.export_dir / TOKENIZER_FILE, self.spec["pad_id"], self.spec["pad_token"]
        )
        self._truncation: int | None = None
        self._unknown_id = unknown_token_id(self._tokenizer)

    def unknown_share(self, text: str) -> float | None:
        """Share of the text's tokens (special tokens aside) that the tokenizer cannot represent."""
        if self._unknown_id is None:
            return None
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        return sum(i == self._unknown_id for i in ids) / len(ids) if ids else None

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts for storage, in input order (lists; see `embed_array` for an array)."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts for storage: a float32 array of shape (len(texts), dimension), rows in
        input order. Texts are batched by similar length, so each batch pads little."""
        import numpy as np

        self.calls += 1
        result = np.zeros((len(texts), self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        prompt = self.spec["document_prompt"]
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            result[batch] = self._embed(
                [prompt + texts[i] for i in batch], self.spec["document_max_length"]
            )
        self.embedded += len(texts)
        return result

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query (with the model's query prompt, if it has one)."""
        self.calls += 1
        vector = self._embed([self.spec["query_prompt"] + text], self.spec["query_max_length"])[0]
        self.embedded += 1
        return vector.tolist()

    def _embed(self, texts: list[str], max_length: int) -> np.ndarray:
        import numpy as np

        if self._truncation != max_length:
            self._tokenizer.enable_truncation(max_length=max_length)
            self._truncation = max_length
        encodings = self._tokenizer.encode_batch(texts)
        columns = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }
        feed = {name: np.asarray(columns[name], dtype=np.int64) for name in self._input_names}
        mask = np.asarray(columns["attention_mask"], dtype=np.float32)
        (tokens,) = self._session.run(["token_embeddings"], feed)
        pooled = np.concatenate(
            [_pool(mode, tokens.astype(np.float32), mask) for mode in self.spec["pooling"]],
            axis=-1,
        )
        if self.spec["normalize"]:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.maximum(norms, 1e-12)  # same epsilon as torch F.normalize
        return pooled.astype(np.float32)


def _pool(mode: str, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """One sentence-transformers pooling mode over right-padded token embeddings."""
    import numpy as np

    weights = mask[..., None]
    if mode == "cls":
        first = mask.argmax(axis=1)
        return np.asarray(tokens[np.arange(len(tokens)), first])
    if mode == "max":
        return np.asarray(np.where(weights > 0, tokens, -np.inf).max(axis=1))
    if mode in ("mean", "mean_sqrt_len_tokens"):
        total = (tokens * weights).sum(axis=1)
        count = np.maximum(weights.sum(axis=1), 1e-9)
        return np.asarray(total / (count if mode == "mean" else np.sqrt(count)))
    if mode == "weightedmean":
        positions = np.arange(1, tokens.shape[1] + 1, dtype=np.float32)[None, :, None]
        weighted = weights * positions
        return np.asarray((tokens * weighted).sum(axis=1) / np.maximum(weighted.sum(axis=1), 1e-9))
    if mode == "lasttoken":
        last = mask.shape[1] - 1 - mask[:, ::-1].argmax(axis=1)
        return np.asarray(
            tokens[np.arange(len(tokens)), last] * mask[np.arange(len(mask)), last][:, None]
        )
    raise ModelError(f"pooling mode {mode!r} is not supported by the ONNX path")


def _open_session(path: Path, threads: int | None = None) -> Any:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise ModelError("onnxruntime is not installed: pip install onnxruntime") from exc
    if not (path.parent / WEIGHTS_FILE).exists():
        # An export from before WEIGHTS_FILE: move its weights out once, so that this and
        # every later search opens the model faster. Any failure (a read-only cache, a
        # damaged file) leaves the export as it was: slower to open, or reported just below.
        with contextlib.suppress(Exception):
            _store_weights_apart(path, path.parent.parent)
    options = ort.SessionOptions()
    # One query is a tiny workload: a couple of threads and no inter-op pool keep start-up and
    # latency low on small machines without starving the rest of the process.
    options.intra_op_num_threads = threads or max(1, min(4, os.cpu_count() or 1))
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise ModelError(
            f"cannot open the ONNX model {path}: {exc}; delete {path.parent} and run "
            "`stitcher model export`"
        ) from exc


def _open_tokenizer(path: Path, pad_id: int, pad_token: str) -> Any:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise ModelError(f"cannot read the tokenizer {path}: {exc}") from exc
    # tokenizer.json files often carry a fixed padding/truncation from training (MiniLM's says
    # "pad everything to 128"); sentence-transformers pads to the longest text in the batch.
    tokenizer.no_truncation()
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token, direction="right")
    return tokenizer


def unknown_token_id(tokenizer: Any) -> int | None:
    """Id of a `tokenizers` tokenizer's unknown token ([UNK], <unk>), None if it has none."""
    model = json.loads(tokenizer.to_str()).get("model", {})
    if isinstance(model.get("unk_id"), int):  # Unigram (sentencepiece)
        return int(model["unk_id"])
    token = model.get("unk_token")
    if not token:
        return None
    found = tokenizer.token_to_id(token)
    return int(found) if found is not None else None
