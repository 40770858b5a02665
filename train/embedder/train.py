"""Train semgraph's code-search embedder from all-MiniLM-L6-v2 on docstring → code pairs.

    PYTHONPATH=src nice -n 15 python -m train.embedder.train \\
        --data /var/tmp/semgraph-embed-data/pairs.jsonl.zst --out /var/tmp/semgraph-embed-model

1. **Prepare** (once per output directory, cached in ``OUT/prep``): a seeded sample of
   ``--max-pairs`` train pairs; a hard negative for each, mined by BM25 from the same
   package and language (:mod:`train.embedder.mining`); the consistency filter, which keeps a
   pair only when the base model ranks its code in the top ``--consistency-k`` of all sampled
   codes of its language (on a CPU the base model runs there as the product runs it, OpenVINO
   int8: ``--filter-backend``). The code side is the product's embedded text
   (:mod:`train.embedder.texts`), truncated at 128 tokens.
2. **Train**: (query, positive, hard negative) triples with in-batch negatives
   (MultipleNegativesRankingLoss written in torch: cross-entropy over scaled cosine scores of
   each query against every positive and every hard negative of the batch), AdamW with linear
   warm-up and decay. The data order is a function of the seed and the step alone.
3. **Resume**: a checkpoint every ``--save-every`` steps (:mod:`train.embedder.checkpoint`);
   rerunning the same command continues from the newest one. ``OUT/final`` is the last
   model, a sentence-transformers directory that ``SEMGRAPH_EMBEDDING_MODEL`` can name.

``--verify-base`` checks the base weights (:mod:`train.embedder.verify_base`) and exits.

The module is over 300 lines because it is the one script a reader follows top to bottom:
preparation, loss, loop, resume and command line; the reusable parts (mining, checkpoints,
texts) live in their own modules.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from train.embedder import checkpoint
from train.embedder.mining import consistency_keep, mine_hard_negatives, positive_ranks
from train.embedder.texts import MAX_TOKENS, code_text, query_text

SEED = 20261207


class Progress:
    """A log line at least every ``every`` seconds, from a background thread, with the
    latest state (a step can take longer than the interval on a shared CPU)."""

    def __init__(self, log: Path | None, every: float = 10.0) -> None:
        self.log = log
        self.every = every
        self.state: dict[str, Any] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def say(self, message: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {message}"
        print(line, flush=True)
        if self.log is not None:
            with self.log.open("a") as fh:
                fh.write(line + "\n")

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            if self.state:
                self.say(" ".join(f"{k}={v}" for k, v in self.state.items()))

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()


def seed_everything(seed: int) -> None:
    import torch  # heavy: loaded when training

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def batch_indices(n: int, batch: int, step: int, seed: int) -> list[int]:
    """The triples of step ``step``: a flat stream of seeded permutations of ``range(n)``
    (epoch ``e`` is permutation ``(seed, e)``), cut into batches of ``batch``."""
    out: list[int] = []
    pos = step * batch
    while len(out) < batch:
        epoch, offset = divmod(pos, n)
        order = np.random.default_rng([seed, epoch]).permutation(n)
        take = order[offset : offset + batch - len(out)]
        out.extend(int(i) for i in take)
        pos += len(take)
    return out


def load_model(path: str, device: str) -> Any:
    from sentence_transformers import SentenceTransformer  # heavy: loaded when training

    model = SentenceTransformer(path, device=device)
    model.max_seq_length = MAX_TOKENS
    return model


class ProductEncoder:
    """The base model as the product runs it on a CPU (OpenVINO int8, 128 tokens), for the
    consistency filter: 3-4x faster than torch float32 there, and the filter only needs the
    base model's ranking, not its gradients."""

    def __init__(self, model_dir: str) -> None:
        from semgraph.config import load_settings
        from semgraph.search.embed import Embedder

        settings = load_settings(embedding_model=model_dir, embedding_backend="openvino")
        self.embedder = Embedder(settings)

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        return np.asarray(self.embedder.embed(texts), dtype=np.float32)


def encode(model: Any, texts: list[str], progress: Progress, what: str) -> np.ndarray:
    out = []
    start = time.time()
    for i in range(0, len(texts), 32):
        out.append(model.encode(texts[i : i + 32], batch_size=32, normalize_embeddings=True))
        done = min(i + 32, len(texts))
        rate = done / max(time.time() - start, 1e-9)
        progress.state = {
            "encode": what,
            "done": f"{done}/{len(texts)}",
            "per_s": f"{rate:.1f}",
            "eta_s": f"{(len(texts) - done) / rate:.0f}",
        }
    progress.state = {}
    return np.concatenate(out) if out else np.zeros((0, 384), dtype=np.float32)


def prepare(args: argparse.Namespace, progress: Progress) -> list[dict[str, str]]:
    """The training triples (cached in ``OUT/prep``), with the filter's counts in its
    ``stats.json``."""
    from train.embedder.build_data import iter_pairs

    prep = args.out / "prep"
    triples_file = prep / "triples.jsonl"
    if triples_file.is_file():
        progress.say(f"prepared triples from {triples_file}")
        return [json.loads(line) for line in triples_file.read_text().splitlines()]
    parts = frozenset(p for p in args.context.split(",") if p)
    pairs = [p for p in iter_pairs(args.data) if p["split"] == "train"]
    order = np.random.default_rng(args.seed).permutation(len(pairs))
    anchors = sorted(int(i) for i in order[: args.max_pairs])
    progress.say(f"{len(pairs)} train pairs, {len(anchors)} sampled; mining hard negatives")
    negatives = mine_hard_negatives(pairs, anchors)
    mined = [a for a in anchors if negatives[a] is not None]
    progress.say(f"{len(mined)} with a hard negative; encoding with the base model")
    cpu_filter = args.device == "cpu" and args.filter_backend == "openvino"
    model = ProductEncoder(args.base) if cpu_filter else load_model(args.base, args.device)
    queries = encode(model, [query_text(pairs[a]) for a in mined], progress, "queries")
    codes = encode(model, [code_text(pairs[a], parts) for a in mined], progress, "codes")
    ranks = positive_ranks(queries, codes, [pairs[a]["lang"] for a in mined])
    keep = consistency_keep(ranks, args.consistency_k)
    triples = []
    for a, kept in zip(mined, keep, strict=True):
        negative = negatives[a]
        if kept and negative is not None:
            triples.append(
                {
                    "id": pairs[a]["id"],
                    "query": query_text(pairs[a]),
                    "positive": code_text(pairs[a], parts),
                    "negative": code_text(pairs[negative], parts),
                }
            )
    langs: dict[str, list[int]] = {}
    for a, kept in zip(mined, keep, strict=True):
        langs.setdefault(pairs[a]["lang"], [0, 0])[int(bool(kept))] += 1
    stats = {
        "train_pairs": len(pairs),
        "sampled": len(anchors),
        "no_hard_negative": len(anchors) - len(mined),
        "consistency_k": args.consistency_k,
        "consistency_dropped": int((~keep).sum()),
        "kept": len(triples),
        "by_lang_dropped_kept": langs,
        "base_recall_at_1_in_pool": float((ranks < 1).mean()) if len(ranks) else 0.0,
        "context": sorted(parts),
        "seed": args.seed,
    }
    prep.mkdir(parents=True, exist_ok=True)
    tmp = prep / "triples.jsonl.tmp"
    tmp.write_text("".join(json.dumps(t) + "\n" for t in triples))
    (prep / "stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    tmp.replace(triples_file)
    progress.say(f"prepared: {json.dumps(stats)}")
    return triples


def mnrl_loss(model: Any, batch: list[dict[str, str]], scale: float) -> Any:
    """MultipleNegativesRankingLoss: each query against all positives and hard negatives of
    the batch; its own positive is the label."""
    import torch  # heavy: loaded when training

    def embed(texts: list[str]) -> Any:
        features = model.preprocess(texts) if hasattr(model, "preprocess") else None
        if features is None:
            features = model.tokenize(texts)
        features = {
            k: v.to(model.device) for k, v in features.items() if isinstance(v, torch.Tensor)
        }
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    q = embed([t["query"] for t in batch])
    docs = embed([t["positive"] for t in batch] + [t["negative"] for t in batch])
    scores = q @ docs.T * scale
    labels = torch.arange(len(batch), device=scores.device)
    return torch.nn.functional.cross_entropy(scores, labels)


def train(args: argparse.Namespace, progress: Progress) -> Path:
    import torch  # heavy: loaded when training

    seed_everything(args.seed)
    triples = prepare(args, progress)
    total = int(args.steps or max(1, len(triples) // args.batch_size))
    resume = checkpoint.latest(args.out)
    progress.state = {"phase": "loading the model", "from": (resume or Path(args.base)).name}
    model = load_model(str(resume or args.base), args.device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, int(total * args.warmup))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    start, loss_avg = 0, float("nan")
    if resume is not None:
        state = checkpoint.load_state(resume)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        checkpoint.set_rng_state(state["rng"])
        start = int(state["step"])
        loss_avg = float(state["extra"].get("loss_avg", loss_avg))
        progress.say(f"resumed from {resume.name} at step {start}")
    epoch_steps = len(triples) / args.batch_size
    progress.say(
        f"training {len(triples)} triples, batch {args.batch_size}, steps {start}->{total} "
        f"({total / epoch_steps:.2f} epochs), device {model.device}"
    )
    progress.state = {"phase": "first step", "step": f"{start}/{total}"}
    began = time.time()
    for done_here, step in enumerate(range(start, total), start=1):
        batch = [triples[i] for i in batch_indices(len(triples), args.batch_size, step, args.seed)]
        loss = mnrl_loss(model, batch, args.scale)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        value = float(loss.detach())
        loss_avg = value if np.isnan(loss_avg) else 0.9 * loss_avg + 0.1 * value
        rate = done_here / (time.time() - began)
        progress.state = {
            "step": f"{step + 1}/{total}",
            "loss": f"{value:.4f}",
            "loss_avg": f"{loss_avg:.4f}",
            "lr": f"{scheduler.get_last_lr()[0]:.2e}",
            "steps_per_s": f"{rate:.4f}",
            "eta_s": f"{(total - step - 1) / rate:.0f}",
        }
        if (step + 1) % args.save_every == 0 or step + 1 == total:
            path = checkpoint.save(
                args.out, step + 1, model, optimizer, scheduler, {"loss_avg": loss_avg}
            )
            progress.say(f"saved {path.name} loss_avg={loss_avg:.4f} steps_per_s={rate:.4f}")
    progress.state = {}
    final: Path = args.out / "final"
    model.save(str(final))
    progress.say(f"done: {final}")
    return final


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    from semgraph.search.model_files import default_model_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument(
        "--data", type=Path, default=Path("/var/tmp/semgraph-embed-data/pairs.jsonl.zst")
    )
    ap.add_argument("--out", type=Path, default=Path("/var/tmp/semgraph-embed-model"))
    ap.add_argument("--base", default=str(default_model_dir()), help="base model directory")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--max-pairs", type=int, default=200_000, help="train pairs sampled")
    ap.add_argument("--consistency-k", type=int, default=10)
    ap.add_argument(
        "--filter-backend",
        choices=["openvino", "torch"],
        default="openvino",
        help="how the consistency filter runs the base model on a CPU",
    )
    ap.add_argument("--context", default="", help="context parts, e.g. module,class,calls")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=0, help="total steps (0: one epoch)")
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--warmup", type=float, default=0.1, help="fraction of the steps")
    ap.add_argument("--scale", type=float, default=20.0, help="cosine score scale")
    ap.add_argument("--save-every", type=int, default=25)
    ap.add_argument("--device", default="auto", help="auto, cpu or cuda")
    ap.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    ap.add_argument("--verify-base", action="store_true", help="check the base weights, exit")
    args = ap.parse_args(argv)
    return args


def main(argv: list[str] | None = None) -> int:
    import torch  # heavy: loaded when training

    args = parse(argv)
    torch.set_num_threads(args.threads)
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.verify_base:
        from train.embedder.verify_base import verify

        problems = verify(Path(args.base))
        for problem in problems:
            print(f"FAIL {problem}")
        print("base weights verified" if not problems else "base weights NOT verified")
        return 1 if problems else 0
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "args.json").write_text(
        json.dumps({k: str(v) for k, v in vars(args).items()}, indent=2) + "\n"
    )
    with Progress(args.out / "train.log") as progress:
        train(args, progress)
    return 0


if __name__ == "__main__":
    sys.exit(main())
