"""The OpenVINO embedding runtime: tokenise, run the compiled model, pool, normalise. No torch.

Texts are tokenised with the ``tokenizers`` library from the model directory's
``tokenizer.json``, truncated at the model's ``max_seq_length`` (its ``do_lower_case`` is
applied first when set), and padded to a width of their own (below). The compiled
model returns token embeddings; they are mean-pooled under the attention mask (or the CLS
token, as the model's pooling config says) and L2-normalised in numpy, in fp32.

The compiled model runs with as many inference threads as the process may use
(``embedding_threads``; 0 = the CPUs in its affinity mask) and the LATENCY hint (one stream:
a batch uses every thread, and requests are synchronous, so the order of results is the
order of batches).

Padding changes a vector slightly (measured: cosine 0.99985 between a text alone and the same
text padded among longer ones), so each text runs at a width of its own (its token count
rounded up to ``embedding_pad_multiple``) and :meth:`Embedder.embed` batches texts of one
width together: the same text gives the same vector in any batch (cosine >= 0.9999998).

``bf16`` / ``fp32`` select the inference precision of the non-quantised operations; an int8
model runs its quantised operations in int8 either way.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from semgraph.errors import EmbeddingError
from semgraph.search.model_files import transformer_dir

_PRECISION = {"int8": None, "bf16": "bf16", "fp32": "f32"}


def cpu_threads(setting: int) -> int:
    """``setting`` when positive, else the CPUs this process may run on."""
    if setting > 0:
        return setting
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def pooling_mode(model_dir: Path) -> str:
    """``mean`` or ``cls`` from the model's Pooling config; others are not supported here."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text())
        pooling = next(m for m in modules if str(m.get("type", "")).endswith(".Pooling"))
        conf = json.loads((model_dir / str(pooling.get("path", "")) / "config.json").read_text())
    except (OSError, ValueError, StopIteration, AttributeError, TypeError) as exc:
        raise EmbeddingError(f"{model_dir}: no readable Pooling module config ({exc})") from exc
    # sentence-transformers 6 writes ``"pooling_mode": "mean"``; earlier ones a flag per mode
    named = conf.get("pooling_mode") if isinstance(conf, dict) else None
    if named in ("mean", "cls"):
        return str(named)
    modes = {k for k, v in conf.items() if k.startswith("pooling_mode_") and v is True}
    if modes == {"pooling_mode_mean_tokens"}:
        return "mean"
    if modes == {"pooling_mode_cls_token"}:
        return "cls"
    raise EmbeddingError(f"{model_dir}: pooling {sorted(modes)} is not supported by OpenVINO path")


def lower_case(model_dir: Path) -> bool:
    try:
        conf = json.loads((model_dir / "sentence_bert_config.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(isinstance(conf, dict) and conf.get("do_lower_case"))


class OpenVinoEncoder:
    """One compiled OpenVINO model and its tokenizer."""

    def __init__(
        self,
        model_dir: Path,
        xml: Path,
        *,
        quantization: str,
        threads: int,
        max_seq_length: int,
        pad_multiple: int = 16,
    ) -> None:
        # heavy (a native runtime: ~40 MB and a second to import): deferred to first embedding
        import openvino as ov

        self.model_dir = model_dir
        self.max_seq_length = max_seq_length
        self.pad_multiple = max(pad_multiple, 1)
        self.pooling = pooling_mode(model_dir)
        self.lower = lower_case(model_dir)
        self.threads = cpu_threads(threads)
        try:
            tokenizer_dir = _tokenizer_dir(model_dir)
            self.tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        except Exception as exc:  # tokenizers raises its own Exception subclasses
            raise EmbeddingError(f"cannot load {model_dir}/tokenizer.json: {exc}") from exc
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        config: dict[str, Any] = {
            "INFERENCE_NUM_THREADS": self.threads,
            "PERFORMANCE_HINT": "LATENCY",
        }
        if _PRECISION[quantization]:
            config["INFERENCE_PRECISION_HINT"] = _PRECISION[quantization]
        try:
            core = ov.Core()
            self.compiled = core.compile_model(str(xml), "CPU", config)
        except Exception as exc:  # openvino raises RuntimeError with the plugin's message
            raise EmbeddingError(f"cannot compile OpenVINO model {xml}: {exc}") from exc
        self.request = self.compiled.create_infer_request()
        # one infer request is not reentrant ("Infer Request is busy"): a search's query and a
        # reindex's batch in the same process (the web server, MCP) take turns on it
        self._infer_lock = threading.Lock()
        self.input_names = [port.get_any_name() for port in self.compiled.inputs]

    def tokenize(self, texts: list[str]) -> list[Any]:
        """The tokenizer's encodings (ids, type ids, mask), truncated at max_seq_length."""
        if self.lower:
            texts = [t.lower() for t in texts]
        try:
            return list(self.tokenizer.encode_batch(texts, add_special_tokens=True))
        except Exception as exc:  # tokenizers raises TypeError, ValueError, its own errors
            raise EmbeddingError(f"tokenizing {len(texts)} texts failed: {exc}") from exc

    def width(self, n_tokens: int) -> int:
        """The padded width of a text of ``n_tokens`` tokens: rounded up to ``pad_multiple``
        (never past max_seq_length). A text is always run at its own width, so its vector
        does not depend on the other texts of its batch."""
        rounded = -(-n_tokens // self.pad_multiple) * self.pad_multiple
        return max(min(rounded, self.max_seq_length), n_tokens, 1)

    def encode(self, encodings: list[Any]) -> np.ndarray:
        """L2-normalised sentence vectors of tokenised texts (one batch, padded to the widest
        text's :meth:`width`: a batch of one width keeps every vector independent of it)."""
        n = len(encodings)
        width = max(self.width(len(e.ids)) for e in encodings)
        ids = np.zeros((n, width), dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        for row, e in enumerate(encodings):
            k = len(e.ids)
            ids[row, :k] = e.ids
            types[row, :k] = e.type_ids
            mask[row, :k] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        try:
            with self._infer_lock:
                result = self.request.infer({name: feeds[name] for name in self.input_names})
                tokens = np.array(result[self.compiled.output(0)], dtype=np.float32)
        except Exception as exc:  # openvino raises RuntimeError from the plugin
            raise EmbeddingError(f"OpenVINO inference on {n} texts failed: {exc}") from exc
        if self.pooling == "cls":
            pooled = tokens[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: np.ndarray = pooled / np.maximum(norms, 1e-12)
        return out


def _tokenizer_dir(model_dir: Path) -> Path:
    inner = transformer_dir(model_dir)
    return inner if (inner / "tokenizer.json").is_file() else model_dir
