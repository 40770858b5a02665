"""Held-out retrieval of the embedder: query → code over the ``valid`` split.

    PYTHONPATH=src nice -n 15 python -m train.embedder.evaluate \\
        --model /var/tmp/semgraph-embed-model/final

The ``valid`` pairs come from packages that training never reads (the split is by package).
Each query is scored against every code of its language in ``valid`` (the code side as the
product embeds it, 128 tokens), by the base model and by each ``--model``, in one run:
recall@1/5/10 and MRR@10, per language and overall. ``--max-queries`` samples queries (seeded)
to bound the time; every code of the language stays a candidate.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from semgraph.search.model_files import sha256_file as sha256_of
from train.embedder.texts import code_text, query_text
from train.embedder.train import SEED, Progress, encode, load_model

PRODUCT_PATH = (
    "SEMGRAPH_EMBEDDING_MODEL={model} SEMGRAPH_SEARCH_INDEX_PREFIX=evalb "
    "python -m bench.search.bench_retrieval --only outside"
)


def metrics(ranks: np.ndarray) -> dict[str, float]:
    """recall@1/5/10 and MRR@10 from 0-based ranks of each query's own code."""
    if not len(ranks):
        return {"n": 0}
    return {
        "n": len(ranks),
        "recall@1": float((ranks < 1).mean()),
        "recall@5": float((ranks < 5).mean()),
        "recall@10": float((ranks < 10).mean()),
        "mrr@10": float(np.where(ranks < 10, 1.0 / (ranks + 1), 0.0).mean()),
    }


def rank_queries(
    queries: np.ndarray, codes: np.ndarray, own: list[int], langs_q: list[str], langs_c: list[str]
) -> np.ndarray:
    """Each query's 0-based rank of its own code (``own[i]``) among its language's codes."""
    ranks = np.zeros(len(own), dtype=np.int64)
    c_langs = np.array(langs_c)
    for i, (vec, target) in enumerate(zip(queries, own, strict=True)):
        pool = np.flatnonzero(c_langs == langs_q[i])
        sims = codes[pool] @ vec
        ranks[i] = int((sims > float(codes[target] @ vec)).sum())
    return ranks


def cache_key(model_dir: Path, texts: list[str]) -> str:
    """Vectors are reused only for the same weights and the same texts."""
    digest = hashlib.sha256(sha256_of(model_dir / "model.safetensors").encode())
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:24]


def vectors(
    path: str, texts: dict[str, list[str]], cache: Path, progress: Progress, device: str
) -> dict[str, np.ndarray]:
    """The model's vectors of each list of texts, from ``cache`` when computed before."""
    key = cache_key(Path(path), [t for name in sorted(texts) for t in texts[name]])
    file = cache / f"{key}.npz"
    if file.is_file():
        progress.say(f"{path}: vectors from {file}")
        with np.load(file) as data:
            return {name: data[name] for name in texts}
    model = load_model(path, device)
    model.eval()
    out = {name: encode(model, items, progress, name) for name, items in texts.items()}
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(cache / f"{key}.tmp.npz", codes=out["codes"], queries=out["queries"])
    (cache / f"{key}.tmp.npz").replace(file)
    return out


def main(argv: list[str] | None = None) -> int:
    import torch  # heavy: loaded when evaluating

    from semgraph.search.model_files import default_model_dir
    from train.embedder.build_data import iter_pairs

    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument(
        "--data", type=Path, default=Path("/var/tmp/semgraph-embed-data/pairs.jsonl.zst")
    )
    ap.add_argument("--base", default=str(default_model_dir()))
    ap.add_argument("--model", action="append", default=[], help="a trained model directory")
    ap.add_argument("--max-queries", type=int, default=0, help="sampled queries (0: all)")
    ap.add_argument("--context", default="")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    ap.add_argument("--cache", type=Path, default=Path("/var/tmp/semgraph-embed-eval-cache"))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    parts = frozenset(p for p in args.context.split(",") if p)
    pairs = [p for p in iter_pairs(args.data) if p["split"] == "valid"]
    picked = list(range(len(pairs)))
    if args.max_queries and args.max_queries < len(pairs):
        rng = np.random.default_rng(SEED)
        picked = sorted(int(i) for i in rng.permutation(len(pairs))[: args.max_queries])
    langs = [p["lang"] for p in pairs]
    results: dict[str, dict[str, dict[str, float]]] = {}
    with Progress(None) as progress:
        for name in ["base", *args.model]:
            path = args.base if name == "base" else name
            texts = {
                "codes": [code_text(p, parts) for p in pairs],
                "queries": [query_text(pairs[i]) for i in picked],
            }
            got = vectors(path, texts, args.cache, progress, device)
            codes, queries = got["codes"], got["queries"]
            ranks = rank_queries(queries, codes, picked, [langs[i] for i in picked], langs)
            q_langs = np.array([langs[i] for i in picked])
            results[name] = {"all": metrics(ranks)}
            for lang in sorted(set(q_langs)):
                results[name][lang] = metrics(ranks[q_langs == lang])
            progress.say(f"{name}: {json.dumps(results[name]['all'])}")
    for name, by_lang in results.items():
        for lang, m in by_lang.items():
            cells = " ".join(
                f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in m.items()
            )
            print(f"{name} {lang} {cells}")
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    print("\nProduct-path evaluation (bench/README.md, 'Another model'), with a stack running:")
    for name in ["<base: unset>", *args.model]:
        print("  " + PRODUCT_PATH.format(model=name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
