"""Answer sizes in tokens, measured with the embedding model's tokenizer (a proxy for the
agent's own: both are subword tokenizers of similar granularity on code)."""

from __future__ import annotations

import threading
from pathlib import Path

from tokenizers import Tokenizer

from semgraph.config import Settings
from semgraph.search.model_files import default_model_dir, resolve_model_dir

#: the most tokens one answer may take
MAX_ANSWER_TOKENS = 20_000

_lock = threading.Lock()
_loaded: dict[Path, Tokenizer] = {}


def _tokenizer_file(settings: Settings) -> Path:
    model = resolve_model_dir(settings.embedding_model)
    candidate = model / "tokenizer.json"
    return candidate if candidate.is_file() else default_model_dir() / "tokenizer.json"


class TokenCounter:
    """Counts the tokens of a text (no truncation, no special tokens)."""

    def __init__(self, settings: Settings) -> None:
        path = _tokenizer_file(settings)
        with _lock:
            tokenizer = _loaded.get(path)
            if tokenizer is None:
                tokenizer = Tokenizer.from_file(str(path))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                _loaded[path] = tokenizer
        self._tokenizer = tokenizer

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
