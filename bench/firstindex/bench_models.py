"""Embedding models A/B: the same chunks embedded by each model, as the product embeds them.

    python -m bench.firstindex.bench_models [--models all-minilm-l6-v2,semgraph-code-minilm]
        [--repo /work/main] [--max-chunks 3000] [--repeats 2]

For each model, in a child process of its own (so its peak RSS is its own): load the model
through :class:`semgraph.search.embed.Embedder` (the product's backend choice: OpenVINO int8
on a CPU), then embed the texts the index would embed for the chunks of ``--repo`` at HEAD
(:func:`bench.firstindex.bench_embed.parsed_repo`, ``Embedder.text_for``), with the product's
token-bounded batches (``Embedder.embed``). Models take turns (A, B, A, B ...); the best
time of each is reported, as chunks/s, and the ratio of each model's chunks/s to the first
model's (the target of a new model: >= 0.8). Peak RSS is the child's ``ru_maxrss`` after its
model is loaded and has embedded everything.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit


def child(model: str, repo: Path, max_chunks: int) -> dict[str, Any]:
    """One model's run (in this process): load, embed every text once, report."""
    from bench.firstindex.bench_embed import parsed_repo, trim
    from semgraph.config import load_settings
    from semgraph.search.embed import Embedder

    with tempfile.TemporaryDirectory() as tmp:
        files = trim(parsed_repo(repo, Path(tmp), 0), max_chunks)
    embedder = Embedder(load_settings(embedding_model=model))
    texts = [embedder.text_for(f.path, c) for f in files for c in f.chunks]
    started = time.perf_counter()
    embedder.embed(texts[:8])  # the load and first compile are not the phase
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    embedder.embed(texts)
    seconds = time.perf_counter() - started
    return {
        "model": model,
        "model_id": embedder.model_id,
        "backend": embedder.backend_name,
        "chunks": len(texts),
        "seconds": round(seconds, 3),
        "chunks_per_s": round(len(texts) / seconds, 1),
        "load_s": round(load_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--models", default="all-minilm-l6-v2,semgraph-code-minilm")
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2])
    ap.add_argument("--max-chunks", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.repo, args.max_chunks)))
        return
    models = [m for m in args.models.split(",") if m]
    best: dict[str, dict[str, Any]] = {}
    for turn in range(args.repeats):
        for model in models:
            cmd = [sys.executable, "-m", "bench.firstindex.bench_models", "--child", model]
            cmd += ["--repo", str(args.repo), "--max-chunks", str(args.max_chunks)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            got = json.loads(out.strip().splitlines()[-1])
            emit("models.run", turn=turn, **got)
            if model not in best or got["seconds"] < best[model]["seconds"]:
                best[model] = got
    first = best[models[0]]["chunks_per_s"]
    for model in models:
        row = best[model]
        emit(
            "models.best",
            model=model,
            chunks_per_s=row["chunks_per_s"],
            ratio_to_first=round(row["chunks_per_s"] / first, 3),
            peak_rss_mb=row["peak_rss_mb"],
            model_id=row["model_id"],
        )


if __name__ == "__main__":
    main()
