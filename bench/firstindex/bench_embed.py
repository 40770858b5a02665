"""Embedding-phase benchmark: torch fp32 against OpenVINO int8, each against its raw call.

    python -m bench.firstindex.bench_embed [--repo /work/main] [--max-chunks 0] [--repeats 1]
                                [--backends torch,openvino] [--synthetic-files 0]

On the real chunks of a git repository at HEAD (default: this checkout; ``git archive HEAD``
into a temporary directory, every file parsed the way the indexer parses it), measures in the
same run and on the same texts, for each backend:

* raw: the backend's own plain call over all texts: ``model.encode(texts, batch_size=32)``
  for torch (sentence-transformers sorts by length and pads per batch); for OpenVINO the
  same recipe with its own tokenizer and compiled model (tokenise all, sort by length,
  batches of 32);
* phase: the embedding phase of :meth:`SearchIndex.index_files` into a fresh staging index
  (``IndexStats.embed_seconds``: text building, vector keys, reuse lookup, model calls in
  token-bounded batches);
* a second load of the unchanged content (every vector reused from the live index).

The shared vector store (``search_vector_store``) is off, so every chunk is embedded.

Prints phase / raw per backend (target <= 1.15) and torch phase / OpenVINO phase (target
>= 5). Repeats are interleaved (torch, openvino, torch, ...); the minimum of each is
reported. ``--synthetic-files N`` uses ``bench.synth``'s generated repository instead. Needs
the local stack (``semgraph services up``; uses ``SEMGRAPH_ES_URL``).
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness.records import emit
from semgraph.model import FileFacts


def parsed_repo(repo: Path, tmp: Path, synthetic_files: int) -> list[FileFacts]:
    from semgraph.config import load_settings
    from semgraph.indexer.extract import ExtractOptions, extract_file

    settings = load_settings()
    options = ExtractOptions(settings.chunk_max_lines, settings.chunk_max_chars)
    if synthetic_files:
        from bench.synth import generate

        root = generate(tmp / "repo", synthetic_files, seed=6)
    else:
        root = tmp / "repo"
        root.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", "HEAD"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    out = []
    for p in files:
        data = p.read_bytes()
        if len(data) <= settings.max_file_bytes and b"\0" not in data[:8000]:
            out.append(extract_file(str(p.relative_to(root)), data, options))
    return [f for f in out if f.chunks]


def trim(files: list[FileFacts], max_chunks: int) -> list[FileFacts]:
    """The first files holding at most ``max_chunks`` chunks (0: all)."""
    if not max_chunks:
        return files
    kept, total = [], 0
    for facts in files:
        if total + len(facts.chunks) > max_chunks:
            break
        kept.append(facts)
        total += len(facts.chunks)
    return kept


def raw_call(embedder: Any, texts: list[str], batch_size: int = 32) -> np.ndarray:
    """The backend's plain call: what sentence-transformers' encode does, nothing else."""
    if embedder.backend_name == "torch":
        return np.asarray(
            embedder.model.encode(
                texts,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        )
    backend = embedder.backend
    items = backend.tokenize(texts)
    order = sorted(range(len(texts)), key=lambda i: -backend.length(items[i]))
    out = np.empty((len(texts), embedder.dims), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        out[batch] = backend.encode([items[i] for i in batch])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--max-chunks", type=int, default=0, help="0: every chunk")
    parser.add_argument("--synthetic-files", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--backends", default="torch,openvino")
    args = parser.parse_args()

    from semgraph.config import load_settings
    from semgraph.db import connect_search
    from semgraph.search.embed import Embedder
    from semgraph.search.index import SearchIndex
    from semgraph.search.model_files import max_seq_length

    # the shared vector store off: every chunk is embedded by the backend measured
    settings = load_settings(search_vector_store=False)
    es = connect_search(settings)
    manager = SearchIndex(es, settings)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    # torch is today's path before issue 20 (fp32 at the model's own 256 tokens); OpenVINO
    # runs with every default (int8, embedding_max_tokens 128)
    bounds = {"torch": 0}
    embedders = {
        b: Embedder(
            load_settings(
                embedding_backend=b,
                embedding_device="cpu",
                **({"embedding_max_tokens": bounds[b]} if b in bounds else {}),
            )
        )
        for b in backends
    }
    with tempfile.TemporaryDirectory(prefix="semgraph-bench-embed-") as tmp:
        files = trim(parsed_repo(args.repo, Path(tmp), args.synthetic_files), args.max_chunks)
    first = next(iter(embedders.values()))
    texts = [first.text_for(f.path, c) for f in files for c in f.chunks]
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(first.model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_seq_length(first.model_dir))
    lengths = [len(e.ids) for e in tokenizer.encode_batch(texts)]
    source = "synthetic" if args.synthetic_files else f"{args.repo.name}@HEAD"
    print(f"{source}: {len(files)} files, {len(texts)} chunks")
    for name, embedder in embedders.items():
        raw_call(embedder, texts[:32])  # load, export once, warm kernels and caches
        print(f"  {name}: model {embedder.model_id} on {embedder.device}")
        emit(
            "embed.texts",
            files=len(files),
            chunks=len(texts),
            model=str(embedder.model_id),
            device=str(embedder.device),
            backend=name,
            source=source,
            mean_tokens=round(float(np.mean(lengths)), 1),
        )

    best: dict[str, dict[str, float]] = {}
    repo_key = "bench-embed"
    stamp = str(int(time.time()))  # run ids of their own: a leftover of a killed run never clashes

    def cleanup() -> None:
        for info in manager.list_indexes():
            if info.meta.get("repo") == repo_key or repo_key in info.name:
                manager.delete_index(info.name)

    try:
        for rep in range(args.repeats):
            for name, embedder in embedders.items():
                started = time.perf_counter()
                raw_call(embedder, texts)
                raw_s = time.perf_counter() - started
                cleanup()
                run = f"{name}{rep}-{stamp}"
                staging = manager.create_staging(repo_key, f"a{run}", embedder.dims)
                stats = manager.index_files(staging, repo_key, f"a{run}", files, embedder)
                assert stats.embedded == len(set(texts)), stats
                manager.refresh(staging)
                manager.flip_alias(repo_key, staging)
                second = manager.create_staging(repo_key, f"b{run}", embedder.dims)
                again = manager.index_files(second, repo_key, f"b{run}", files, embedder)
                assert again.embedded == 0 and again.hit_rate == 1.0, again
                print(
                    f"repeat {rep} {name}: raw call {raw_s:.2f}s, embedding phase "
                    f"{stats.embed_seconds:.2f}s ({stats.embedded} embedded, bulk "
                    f"{stats.bulk_seconds:.2f}s), unchanged re-run {again.embed_seconds:.2f}s"
                )
                emit(
                    "embed.repeat",
                    repeat=rep,
                    backend=name,
                    raw_s=round(raw_s, 2),
                    phase_s=round(stats.embed_seconds, 2),
                    embedded=stats.embedded,
                    bulk_s=round(stats.bulk_seconds, 2),
                    reuse_s=round(again.embed_seconds, 2),
                    lookup_s=round(again.lookup_seconds, 2),
                    hit_rate_pct=round(again.hit_rate * 100),
                )
                mine = best.setdefault(name, {})
                for key, value in (
                    ("raw", raw_s),
                    ("phase", stats.embed_seconds),
                    ("reuse", again.embed_seconds),
                ):
                    mine[key] = min(mine.get(key, float("inf")), value)
    finally:
        cleanup()
        es.close()
    for name, b in best.items():
        ratio = b["phase"] / b["raw"]
        print(f"{name}: {len(texts) / b['phase']:.1f} chunks/s in the phase, phase/raw {ratio:.3f}")
        emit(
            "embed.summary",
            backend=name,
            texts_per_s=round(len(texts) / b["raw"], 1),
            phase_texts_per_s=round(len(texts) / b["phase"], 1),
            ratio=round(ratio, 3),
            reuse_ratio=round(b["reuse"] / b["phase"], 4),
            speedup=round(b["phase"] / b["reuse"], 1),
        )
    if "torch" in best and "openvino" in best:
        phase_x = best["torch"]["phase"] / best["openvino"]["phase"]
        raw_x = best["torch"]["raw"] / best["openvino"]["raw"]
        print(f"embedding phase torch / openvino: {phase_x:.2f}x (target >= 5); raw {raw_x:.2f}x")
        emit("embed.backends", phase_speedup=round(phase_x, 2), raw_speedup=round(raw_x, 2))


if __name__ == "__main__":
    main()
