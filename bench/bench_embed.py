"""Embedding-phase benchmark: the indexer's embedding phase against raw ``model.encode``.

    python -m bench.bench_embed [--files 40] [--repeats 2]

On a synthetic repository (``bench.synth``) parsed the way the indexer parses it, measures
in the same run and on the same texts:

* baseline: ``model.encode(texts)`` (batched, normalised) with the loaded model;
* the embedding phase of :meth:`SearchIndex.index_files` into a fresh staging index
  (``IndexStats.embed_seconds``: text building, vector keys, model calls);
* a second load of the unchanged content (every vector reused from the live index).

Prints ratio = phase / raw (target <= 1.15) and the reuse speedup. Needs the local stack
(``semgraph services up``; uses ``SEMGRAPH_ES_URL``). Repeats are interleaved; the minimum
of each is reported.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.records import emit
from semgraph.model import FileFacts


def parsed_repo(root: Path, n_files: int) -> list[FileFacts]:
    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.indexer.extract import ExtractOptions, extract_file

    settings = load_settings()
    options = ExtractOptions(settings.chunk_max_lines, settings.chunk_max_chars)
    repo = generate(root / "repo", n_files, seed=6)
    files = sorted(p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
    return [extract_file(str(p.relative_to(repo)), p.read_bytes(), options) for p in files]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    from semgraph.config import load_settings
    from semgraph.db import connect_search
    from semgraph.search.embed import Embedder
    from semgraph.search.index import SearchIndex

    settings = load_settings()
    es = connect_search(settings)
    manager = SearchIndex(es, settings)
    embedder = Embedder(settings)
    repo_key = "bench-embed"
    with tempfile.TemporaryDirectory(prefix="semgraph-bench-embed-") as tmp:
        files = parsed_repo(Path(tmp), args.files)
    texts = [embedder.text_for(f.path, c) for f in files for c in f.chunks]
    model = embedder.model
    model.encode(texts[:32], batch_size=embedder.batch_size)  # warm up kernels and caches
    print(
        f"{len(files)} files, {len(texts)} chunks, model {embedder.model_id} on {embedder.device}"
    )
    emit(
        "embed.texts",
        files=len(files),
        chunks=len(texts),
        model=str(embedder.model_id),
        device=str(embedder.device),
    )

    raw_times: list[float] = []
    phase_times: list[float] = []
    reuse_times: list[float] = []
    try:
        for rep in range(args.repeats):
            started = time.perf_counter()
            model.encode(
                texts,
                batch_size=embedder.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            raw_times.append(time.perf_counter() - started)

            for info in manager.list_indexes():
                if info.meta.get("repo") == repo_key:
                    manager.delete_index(info.name)
            first = manager.create_staging(repo_key, f"a{rep}", embedder.dims)
            stats = manager.index_files(first, repo_key, f"a{rep}", files, embedder)
            assert stats.embedded == len(set(texts)), stats
            phase_times.append(stats.embed_seconds)
            manager.refresh(first)
            manager.flip_alias(repo_key, first)

            second = manager.create_staging(repo_key, f"b{rep}", embedder.dims)
            again = manager.index_files(second, repo_key, f"b{rep}", files, embedder)
            assert again.embedded == 0 and again.hit_rate == 1.0, again
            reuse_times.append(again.embed_seconds)
            print(
                f"repeat {rep}: raw encode {raw_times[-1]:.2f}s, embedding phase "
                f"{stats.embed_seconds:.2f}s (bulk {stats.bulk_seconds:.2f}s), unchanged "
                f"re-run embedding phase {again.embed_seconds:.2f}s (lookup "
                f"{again.lookup_seconds:.2f}s, hit rate {again.hit_rate:.0%})"
            )
            emit(
                "embed.repeat",
                repeat=rep,
                raw_s=round(raw_times[-1], 2),
                phase_s=round(stats.embed_seconds, 2),
                bulk_s=round(stats.bulk_seconds, 2),
                reuse_s=round(again.embed_seconds, 2),
                lookup_s=round(again.lookup_seconds, 2),
                hit_rate_pct=round(again.hit_rate * 100),
            )
    finally:
        for info in manager.list_indexes():
            if info.meta.get("repo") == repo_key:
                manager.delete_index(info.name)
        es.close()
    raw, phase, reuse = min(raw_times), min(phase_times), min(reuse_times)
    print(f"texts/s raw encode: {len(texts) / raw:.1f}")
    print(f"ratio embedding phase / raw model.encode: {phase / raw:.3f} (target <= 1.15)")
    print(f"ratio unchanged re-run embedding phase / first: {reuse / phase:.4f}")
    print(f"speedup of the embedding phase by reuse: {phase / reuse:.1f}x")
    emit(
        "embed.summary",
        texts_per_s=round(len(texts) / raw, 1),
        ratio=round(phase / raw, 3),
        reuse_ratio=round(reuse / phase, 4),
        speedup=round(phase / reuse, 1),
    )


if __name__ == "__main__":
    main()
