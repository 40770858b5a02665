"""The token bound's speed: OpenVINO embedding of this repository's chunks at the model's own
``max_seq_length`` against ``embedding_max_tokens`` (default 128), in one run.

    python -m bench.firstindex.bench_token_bound [--chunks 500] [--rounds 2] [--bound 128]

Every sixth chunk of the checkout's committed HEAD (parsed as the indexer parses it), the
same texts for both; rounds are interleaved and the best of each is reported, with the
ratio. The quality side is ``bench.search.bench_retrieval`` run with
``SEMGRAPH_EMBEDDING_MAX_TOKENS``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench.firstindex.bench_embed import parsed_repo
from bench.harness.records import emit

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    from semgraph.config import load_settings
    from semgraph.search.embed import Embedder, embedding_text

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--bound", type=int, default=128)
    args = ap.parse_args()
    files = parsed_repo(ROOT, Path(tempfile.mkdtemp()), 0)
    texts = [embedding_text(f.path, c) for f in files for c in f.chunks][::6][: args.chunks]
    best: dict[int, float] = {}
    for rnd in range(args.rounds):
        for bound in (0, args.bound):
            embedder = Embedder(
                load_settings(embedding_backend="openvino", embedding_max_tokens=bound)
            )
            embedder.embed(texts[:8])  # load and warm up
            started = time.perf_counter()
            embedder.embed(texts)
            took = time.perf_counter() - started
            best[bound] = min(best.get(bound, took), took)
            print(f"round {rnd} bound {bound or 'model'}: {len(texts)} chunks in {took:.2f} s")
    ratio = best[0] / best[args.bound]
    print(f"best: model's bound {best[0]:.2f} s, {args.bound} tokens {best[args.bound]:.2f} s")
    print(f"speedup {ratio:.2f}x (load {os.getloadavg()[0]:.1f})")
    emit(
        "embed.token_bound",
        chunks=len(texts),
        bound=args.bound,
        seconds_model_bound=round(best[0], 3),
        seconds_bound=round(best[args.bound], 3),
        speedup=round(ratio, 3),
        load=round(os.getloadavg()[0], 2),
    )


if __name__ == "__main__":
    main()
