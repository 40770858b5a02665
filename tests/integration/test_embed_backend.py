"""The OpenVINO embedding backend against torch fp32, on chunks of this repository's own
sources: agreement, batch invariance, the export cache (rebuilt when missing or corrupt,
hostile entries, unwritable state directory, two processes at once), torch kept out of the
worker, and model ids that differ per backend.

The int8 export takes minutes on a loaded 2-core machine: it is done once per state directory
(the test stack's, so CI pays it once per machine) by the session fixture. Cache tests that
must export again use the fp32 recipe (a conversion without calibration) in a temporary
state directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from semgraph.config import Settings, load_settings
from semgraph.errors import EmbeddingError
from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.search.embed import Embedder, embedding_text
from semgraph.search.model_files import BASE_MODEL, default_model_dir, model_fingerprint
from semgraph.search.openvino_cache import ensure_export, export_key, verify

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def repo_texts(n: int) -> list[str]:
    """The embedded texts of this repository's source chunks (sorted files, first ``n``)."""
    settings = load_settings()
    options = ExtractOptions(settings.chunk_max_lines, settings.chunk_max_chars)
    out: list[str] = []
    for path in sorted((ROOT / "src" / "semgraph").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        facts = extract_file(rel, path.read_bytes(), options)
        out += [embedding_text(rel, chunk) for chunk in facts.chunks]
        if len(out) >= n:
            break
    assert len(out) >= n
    return out[:n]


@pytest.fixture(scope="session")
def texts() -> list[str]:
    return repo_texts(240)


@pytest.fixture(scope="session")
def openvino() -> Embedder:
    """The default CPU backend (int8), exported once into the test state directory."""
    embedder = Embedder(load_settings(embedding_backend="openvino"))
    embedder.embed(["warm up: export and compile once per session"])
    return embedder


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    result: np.ndarray = (a * b).sum(axis=1)
    return result


def test_int8_agrees_with_torch_fp32_on_real_code(openvino: Embedder, texts: list[str]) -> None:
    torch_fp32 = Embedder(load_settings(embedding_backend="torch", embedding_device="cpu"))
    ours = np.array(openvino.embed(texts))
    ref = np.array(torch_fp32.embed(texts))
    assert ours.shape == ref.shape == (240, 384)
    cos = cosines(ours, ref)
    assert cos.mean() >= 0.99, f"mean cosine {cos.mean():.4f}"
    assert cos.min() >= 0.9, f"min cosine {cos.min():.4f}"
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-4)
    lengths = openvino.token_lengths(texts)
    assert max(lengths) == 128 and min(lengths) < 64  # mixed lengths, some truncated (default)


def test_a_texts_vector_does_not_depend_on_its_batch(openvino: Embedder, texts: list[str]) -> None:
    sample = texts[:64]
    runs = []
    for size in (1, 7, 32):
        embedder = Embedder(
            load_settings(
                embedding_backend="openvino", embedding_batch_size=size, embedding_batch_tokens=8192
            )
        )
        runs.append(np.array(embedder.embed(sample)))
    # the same texts mixed among others (different neighbours, different padded width)
    mixed = np.array(openvino.embed(texts[100:140] + sample[::-1]))[40:][::-1]
    runs.append(mixed)
    for other in runs[1:]:
        cos = cosines(runs[0], other)
        assert cos.min() >= 0.9999, f"min cosine {cos.min():.6f} between batchings"


def test_a_token_bound_truncates_what_the_model_sees(openvino: Embedder, texts: list[str]) -> None:
    """``embedding_max_tokens`` cuts a long text where the bound says: its vector is the
    vector of its first tokens, and no batch runs wider than the bound."""
    full = Embedder(load_settings(embedding_backend="openvino", embedding_max_tokens=0))
    bounded = Embedder(load_settings(embedding_backend="openvino", embedding_max_tokens=32))
    long_text = max(texts, key=len)
    assert max(bounded.token_lengths([long_text])) <= 32
    words = long_text.split()
    # a head of 48-200 tokens: past the bound of 32, inside the model's own 256
    cut = next(
        k for k in range(1, len(words)) if full.token_lengths([" ".join(words[:k])])[0] >= 48
    )
    head = " ".join(words[:cut])
    assert full.token_lengths([head])[0] <= 200
    changed = head + " " + " ".join(reversed(words[cut:]))
    a, b = np.array(bounded.embed([long_text, changed]))
    assert float(a @ b) >= 0.9999  # only the first 32 tokens count
    full_a, full_b = np.array(full.embed([long_text, changed]))
    assert float(full_a @ full_b) < 0.9999  # the model's own bound sees the difference


def test_threads_embedding_at_once_share_the_model(openvino: Embedder, texts: list[str]) -> None:
    """The web server embeds a query while a reindex embeds batches in the same process: one
    loaded model serves both, each gets its own texts' vectors (was: Infer Request is busy)."""
    from concurrent.futures import ThreadPoolExecutor

    sample = texts[:48]
    alone = np.array(openvino.embed(sample))
    with ThreadPoolExecutor(max_workers=6) as pool:
        parts = list(pool.map(lambda i: openvino.embed(sample[i::6]), range(6)))
    for i, part in enumerate(parts):
        assert cosines(alone[i::6], np.array(part)).min() >= 0.9999


def test_model_id_names_backend_and_quantisation() -> None:
    ids = {
        Embedder(load_settings(embedding_backend="torch", embedding_device="cpu")).model_id,
        Embedder(load_settings(embedding_backend="openvino")).model_id,
        Embedder(
            load_settings(embedding_backend="openvino", embedding_quantization="bf16")
        ).model_id,
        Embedder(
            load_settings(embedding_backend="openvino", embedding_calibration_texts=64)
        ).model_id,
    }
    assert len(ids) == 4
    fingerprint = model_fingerprint(Embedder(load_settings()).model_dir)
    # torch: the model's files and the token bound, no backend recipe
    assert f"{fingerprint}+max128tok" in ids
    assert f"{fingerprint}+openvino-int8-" in " ".join(ids)


def test_the_worker_path_never_imports_torch(openvino: Embedder) -> None:
    if Embedder(load_settings()).backend_name == "torch":  # a GPU is visible: torch on CUDA
        pytest.skip("a CUDA GPU is visible: auto chooses torch")
    probe = textwrap.dedent(
        """
        import json, sys
        from semgraph.config import load_settings
        from semgraph.memory import image_peak_rss_bytes
        from semgraph.search.embed import Embedder
        e = Embedder(load_settings())
        v = e.embed(["def f(x):\\n    return x + 1"] * 40)
        print(json.dumps({"backend": e.backend_name, "torch": "torch" in sys.modules,
                          "n": len(v), "peak_mb": image_peak_rss_bytes() / 2**20}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=600
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["backend"] == "openvino" and seen["n"] == 40
    assert seen["torch"] is False
    assert seen["peak_mb"] < 600, seen


def _settings(state: Path) -> Settings:
    return load_settings(
        state_dir=state,
        embedding_model=BASE_MODEL,  # default_model_dir(): the packaged model, no shipped export
        models_dir=None,  # this test's own export cache, whatever the session shares
        embedding_backend="openvino",
        embedding_quantization="fp32",
    )


def test_cache_is_rebuilt_when_missing_corrupt_or_hostile(tmp_path: Path) -> None:
    model_dir = default_model_dir()
    fp = model_fingerprint(model_dir)
    key = export_key(fp, "fp32", 200)
    root = tmp_path / "state" / "models"
    root.mkdir(parents=True)
    # hostile: the entry is a symlink to a directory with a forged manifest
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "manifest.json").write_text(json.dumps({"key": key, "files": {}}))
    (root / key).symlink_to(decoy)
    assert verify(root / key, key) == "not a directory"
    xml = ensure_export(root, model_dir, fp, "fp32", 200)
    assert xml == root / key / "model.xml" and verify(root / key, key) is None
    assert (decoy / "manifest.json").is_file()  # the link was removed, not its target
    first = np.array(Embedder(_settings(tmp_path / "state")).embed(["def f(): pass"]))

    # corrupt: one flipped byte in the weights is found by the checksum and rebuilt
    weights = root / key / "model.bin"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    assert verify(root / key, key) == "model.bin does not match its checksum"
    (root / key / "manifest.json").write_text("{not json")
    assert str(verify(root / key, key)).startswith("manifest unreadable")
    # deleted: the weights are gone
    weights.unlink()
    ensure_export(root, model_dir, fp, "fp32", 200)
    assert verify(root / key, key) is None
    # a fresh process (not this one's loaded model) gives the same vectors from the rebuild
    probe = (
        "import json,sys;from pathlib import Path;from semgraph.config import load_settings;"
        "from semgraph.search.embed import Embedder;"
        "s=load_settings(state_dir=Path(sys.argv[1]),embedding_backend='openvino',"
        "embedding_model='all-minilm-l6-v2',"
        "embedding_quantization='fp32');print(json.dumps(Embedder(s).embed(['def f(): pass'])))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "state")],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    again = np.array(json.loads(out.stdout.strip().splitlines()[-1]))
    assert cosines(first, again).min() > 0.99999


def test_two_processes_export_once(tmp_path: Path) -> None:
    probe = (
        "import logging,sys;from pathlib import Path;logging.basicConfig(level=logging.INFO);"
        "from semgraph.search.openvino_cache import "
        "ensure_export;from semgraph.search.model_files import default_model_dir as d, "
        "model_fingerprint as f;print(ensure_export(Path(sys.argv[1]),d(),f(d()),'fp32',200))"
    )
    root = tmp_path / "models"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", probe, str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    paths = {out.strip().splitlines()[-1] for out, _ in outs}
    assert len(paths) == 1
    entry = Path(paths.pop()).parent
    assert verify(entry, entry.name) is None
    assert [p.name for p in root.iterdir() if p.name.startswith(".")] == []  # no temp left
    # one export: the second process found the first's verified entry under the lock
    started = sum(err.count("exporting the embedding model to OpenVINO") for _, err in outs)
    assert started == 1, outs


def test_unwritable_state_dir_and_hostile_lock_give_clear_errors(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    embedder = Embedder(_settings(blocker / "state"))
    with pytest.raises(EmbeddingError, match="cannot write the OpenVINO model cache"):
        embedder.embed(["x"])
    root = tmp_path / "models"
    root.mkdir()
    key = export_key(model_fingerprint(default_model_dir()), "fp32", 200)
    (root / f"{key}.lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(EmbeddingError, match="SEMGRAPH_EMBEDDING_BACKEND=torch"):
        ensure_export(
            root, default_model_dir(), model_fingerprint(default_model_dir()), "fp32", 200
        )
    assert not (tmp_path / "elsewhere").exists()
    assert os.access(tmp_path, os.W_OK)
