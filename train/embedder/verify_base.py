"""Checks that the base weights are all-MiniLM-L6-v2 before training trusts them.

1. The sha256 of each file of the packaged model equals ``base_weights.sha256`` beside this
   module. The ``model.safetensors``, ``config.json`` and ``tokenizer.json`` digests there are
   the ones independent projects pin for sentence-transformers/all-MiniLM-L6-v2 at Hub
   revision ``1110a243fdf4706b3f48f1d95db1a4f5529b4d41``.
2. The model behaves as all-MiniLM-L6-v2 does: the cosine similarities of the
   sentence-transformers quick-start sentences match the published matrix, and obvious
   paraphrases outrank unrelated sentences.
3. The product's :class:`semgraph.search.embed.Embedder` (torch backend, 128 tokens) gives
   the same vectors as sentence-transformers on the same directory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semgraph.search.model_files import sha256_file as sha256_of

HERE = Path(__file__).resolve().parent
SUMS = HERE / "base_weights.sha256"
# sentence-transformers' quick start, all-MiniLM-L6-v2 (its README and docs)
QUICKSTART = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
QUICKSTART_SIMS = np.array(
    [[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]], dtype=np.float32
)
# (anchor, paraphrase, unrelated): the paraphrase must be the closer
ORDERED = [
    ("A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."),
    (
        "How do I open a file in Python?",
        "Reading a file with Python",
        "The cat sleeps on the sofa.",
    ),
    ("parse a date string", "convert text to a datetime", "draw a red circle on the canvas"),
]
CODE = [
    "read config\nlib/config.py\ndef read_config(path):\n    with open(path) as fh:\n"
    "        return json.load(fh)",
    "Add\nmath/add.go\nfunc Add(a, b int) int {\n\treturn a + b\n}",
]


def check_files(model_dir: Path) -> list[str]:
    """Problems with the model's files against the recorded digests (empty: all match)."""
    problems = []
    for line in SUMS.read_text().splitlines():
        want, name = line.split(maxsplit=1)
        path = model_dir / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif sha256_of(path) != want:
            problems.append(f"{name}: sha256 {sha256_of(path)} != {want}")
    return problems


def check_behaviour(model_dir: Path) -> list[str]:
    """Problems with the model's outputs (empty: it behaves as all-MiniLM-L6-v2)."""
    from sentence_transformers import SentenceTransformer  # heavy: loaded when checked

    from semgraph.config import Settings
    from semgraph.search.embed import Embedder

    problems = []
    model = SentenceTransformer(str(model_dir), device="cpu")
    model.max_seq_length = 128
    vecs = model.encode(QUICKSTART, normalize_embeddings=True)
    sims = vecs @ vecs.T
    if np.abs(sims - QUICKSTART_SIMS).max() > 2e-3:
        problems.append(f"quick-start similarities {np.round(sims, 4).tolist()}")
    for anchor, near, far in ORDERED:
        a, b, c = model.encode([anchor, near, far], normalize_embeddings=True)
        if not float(a @ b) > float(a @ c) + 0.1:
            problems.append(f"{anchor!r}: {float(a @ b):.3f} vs {float(a @ c):.3f}")
    settings = Settings(
        embedding_model=str(model_dir), embedding_backend="torch", embedding_device="cpu"
    )
    product = np.array(Embedder(settings).embed(CODE), dtype=np.float32)
    direct = model.encode(CODE, normalize_embeddings=True)
    if np.abs(product - direct).max() > 1e-4:
        problems.append(f"Embedder vs sentence-transformers: {np.abs(product - direct).max()}")
    return problems


def verify(model_dir: Path) -> list[str]:
    return check_files(model_dir) + check_behaviour(model_dir)
