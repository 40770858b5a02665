"""Embedding backends: which runtime embeds (torch or OpenVINO), and the two runtimes behind
one small interface (tokenise texts; encode one batch of tokenised texts to normalised
vectors).

Choice (``embedding_backend``): ``auto`` is torch when a CUDA GPU is visible, else OpenVINO;
``auto`` asks the kernel (``/proc/driver/nvidia/gpus``) and ``CUDA_VISIBLE_DEVICES`` before
importing torch, so a CPU-only worker never imports it (torch costs ~300 MB of RSS and
seconds of import). ``auto`` also falls back to torch, and says so in the log, when the
model's pipeline is not one the OpenVINO path runs (Transformer + mean or CLS pooling) or
OpenVINO is not installed. An explicit ``openvino`` raises instead.

The model id (:func:`backend_model_id`) names the backend and quantisation and the export
recipe's key for OpenVINO, so vectors of two backends are never reused for one another:
``<model>@<hash>`` for torch (the id of every index made before the OpenVINO backend), and
``<model>@<hash>+openvino-int8-<recipe hash>`` for OpenVINO.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from semgraph.config import Settings
from semgraph.errors import ConfigError, EmbeddingError
from semgraph.logs import event
from semgraph.search.model_files import max_seq_length, model_fingerprint
from semgraph.search.openvino_cache import ensure_export, export_key
from semgraph.search.openvino_runtime import OpenVinoEncoder, pooling_mode

log = logging.getLogger(__name__)

_LOADED: dict[tuple[str, ...], Any] = {}  # one loaded runtime per process and configuration
_LOADED_LOCK = threading.Lock()


class Backend(Protocol):
    """A loaded model runtime."""

    one_width: bool  # batches must hold texts of one length (the backend's padded width)

    def tokenize(self, texts: list[str]) -> list[Any]: ...

    def length(self, item: Any) -> int: ...

    def encode(self, items: list[Any]) -> np.ndarray: ...


def cuda_visible() -> bool:
    """Whether an NVIDIA GPU is visible, without importing torch."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    gpus = Path("/proc/driver/nvidia/gpus")
    try:
        return gpus.is_dir() and any(gpus.iterdir())
    except OSError:
        return False


def resolve_device(setting: str) -> str:
    """``auto`` -> ``cuda`` when a CUDA device is visible, else ``cpu``; others unchanged."""
    if setting != "auto":
        return setting
    if not cuda_visible():
        return "cpu"
    import torch  # heavy (seconds, hundreds of MB): only when a GPU may be there

    return "cuda" if torch.cuda.is_available() else "cpu"


def openvino_unsupported(model_dir: Path) -> str | None:
    """Why the OpenVINO path cannot run this model (None: it can)."""
    if importlib.util.find_spec("openvino") is None:
        return "openvino is not installed"
    try:
        pooling_mode(model_dir)
    except EmbeddingError as exc:
        return str(exc)
    return None


def choose_backend(settings: Settings, model_dir: Path) -> tuple[str, str]:
    """(backend, device): ``("torch", "cuda"|"cpu"|...)`` or ``("openvino", "cpu")``."""
    setting = settings.embedding_backend
    device = settings.embedding_device
    if setting == "torch" or (setting == "auto" and device not in ("auto", "cpu")):
        return "torch", resolve_device(device)
    if setting == "openvino":
        if device not in ("auto", "cpu"):
            raise ConfigError(f"SEMGRAPH_EMBEDDING_BACKEND=openvino runs on the CPU, not {device}")
        why = openvino_unsupported(model_dir)
        if why:
            raise ConfigError(f"SEMGRAPH_EMBEDDING_BACKEND=openvino: {why}")
        return "openvino", "cpu"
    if device == "auto" and cuda_visible() and resolve_device("auto") == "cuda":
        return "torch", "cuda"
    why = openvino_unsupported(model_dir)
    if why:
        event(log, logging.WARNING, "embedding_backend_fallback", backend="torch", why=why)
        return "torch", "cpu"
    return "openvino", "cpu"


def backend_model_id(fingerprint: str, backend: str, settings: Settings) -> str:
    """The model id vectors are keyed by: the model's files, the backend and its recipe, and
    a token bound when one is set (a truncated text's vector is another vector)."""
    bound = f"+max{settings.embedding_max_tokens}tok" if settings.embedding_max_tokens else ""
    if backend == "torch":
        return fingerprint + bound
    key = export_key(fingerprint, settings.embedding_quantization, calibration(settings))
    recipe = key.rsplit("-", 1)[1]
    return f"{fingerprint}+openvino-{settings.embedding_quantization}-{recipe}{bound}"


def token_bound(settings: Settings, model_dir: Path) -> int:
    """The tokens a text is truncated at: the model's ``max_seq_length``, lowered by
    ``embedding_max_tokens`` when that is set."""
    own = max_seq_length(model_dir)
    return min(own, settings.embedding_max_tokens) if settings.embedding_max_tokens else own


def calibration(settings: Settings) -> int:
    return settings.embedding_calibration_texts


def load_backend(settings: Settings, model_dir: Path, backend: str, device: str) -> Backend:
    """The process's loaded runtime for this configuration (loaded on first use)."""
    quant = settings.embedding_quantization
    key = (
        str(model_dir),
        backend,
        device,
        quant,
        str(settings.embedding_threads),
        str(settings.embedding_pad_multiple),
        str(settings.embedding_max_tokens),
        str(settings.models_path),  # where its export cache is
    )
    with _LOADED_LOCK:
        loaded = _LOADED.get(key)
        if loaded is not None:
            return loaded  # type: ignore[no-any-return]
        started = time.perf_counter()
        if backend == "torch":
            loaded = TorchBackend(model_dir, device, token_bound(settings, model_dir))
        else:
            xml = ensure_export(
                settings.models_path,
                model_dir,
                model_fingerprint(model_dir),
                quant,
                calibration(settings),
            )
            loaded = OpenVinoBackend(
                OpenVinoEncoder(
                    model_dir,
                    xml,
                    quantization=quant,
                    threads=settings.embedding_threads,
                    max_seq_length=token_bound(settings, model_dir),
                    pad_multiple=settings.embedding_pad_multiple,
                )
            )
        _LOADED[key] = loaded
        event(
            log,
            logging.INFO,
            "embedding_model_loaded",
            model=str(model_dir),
            backend=backend,
            device=device,
            quantization=quant if backend == "openvino" else "fp32",
            seconds=round(time.perf_counter() - started, 2),
        )
        return loaded


class OpenVinoBackend:
    """The OpenVINO runtime; a batch holds texts of one padded width (``one_width``)."""

    one_width = True

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.max_seq_length = encoder.max_seq_length

    def tokenize(self, texts: list[str]) -> list[Any]:
        return self.encoder.tokenize(texts)  # type: ignore[no-any-return]

    def length(self, item: Any) -> int:
        return int(self.encoder.width(len(item.ids)))

    def encode(self, items: list[Any]) -> np.ndarray:
        return self.encoder.encode(items)  # type: ignore[no-any-return]


class TorchBackend:
    """sentence-transformers on torch (CUDA, or CPU when asked for)."""

    one_width = False  # fp32 batches differ from a lone text only by float rounding

    def __init__(self, model_dir: Path, device: str, max_tokens: int | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
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
        if max_tokens:
            model.max_seq_length = min(model.max_seq_length or max_tokens, max_tokens)
        self.model = model
        self.max_seq_length = getattr(model, "max_seq_length", None) or None

    def tokenize(self, texts: list[str]) -> list[Any]:
        """(text, token count) pairs; the model tokenises again when it encodes."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None or not callable(tokenizer):
            return [(t, len(t)) for t in texts]  # no text tokenizer: characters bound the size
        limit = self.max_seq_length
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
        return [(t, len(ids)) for t, ids in zip(texts, encoded["input_ids"], strict=True)]

    def length(self, item: Any) -> int:
        return int(item[1])

    def encode(self, items: list[Any]) -> np.ndarray:
        texts = [t for t, _ in items]
        try:
            out = self.model.encode(
                texts,
                batch_size=len(texts),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as exc:  # torch raises RuntimeError, OOM errors, ValueError ...
            raise EmbeddingError(f"embedding {len(texts)} texts failed: {exc}") from exc
        return np.asarray(out, dtype=np.float32)
