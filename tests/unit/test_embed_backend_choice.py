"""Backend choice, model ids, the export cache's checks and the calibration texts, without
loading a model (no export, no server)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from semgraph.config import load_settings
from semgraph.errors import ConfigError, EmbeddingError
from semgraph.search.backend import choose_backend, cuda_visible
from semgraph.search.embed import Embedder
from semgraph.search.model_files import default_model_dir, max_seq_length, transformer_dir
from semgraph.search.openvino_cache import export_key, verify
from semgraph.search.openvino_runtime import cpu_threads, pooling_mode


def model_copy(tmp_path: Path, pooling: dict[str, bool]) -> Path:
    """The default model's configs (no weights) with another pooling config."""
    src = default_model_dir()
    dst = tmp_path / "model"
    dst.mkdir()
    for name in ("modules.json", "config.json", "sentence_bert_config.json", "tokenizer.json"):
        shutil.copy(src / name, dst / name)
    (dst / "1_Pooling").mkdir()
    conf = {"word_embedding_dimension": 384, **pooling}
    (dst / "1_Pooling" / "config.json").write_text(json.dumps(conf))
    return dst


def test_auto_is_openvino_on_a_cpu_and_torch_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert cuda_visible() is False
    model = default_model_dir()
    assert choose_backend(load_settings(), model) == ("openvino", "cpu")
    assert choose_backend(load_settings(embedding_device="cpu"), model) == ("openvino", "cpu")
    assert choose_backend(load_settings(embedding_backend="torch"), model) == ("torch", "cpu")
    assert choose_backend(load_settings(embedding_device="cuda:0"), model) == ("torch", "cuda:0")
    with pytest.raises(ConfigError, match="runs on the CPU"):
        choose_backend(load_settings(embedding_backend="openvino", embedding_device="cuda"), model)
    with pytest.raises(ConfigError, match="SEMGRAPH_EMBEDDING_BACKEND"):
        load_settings(embedding_backend="onnx")
    with pytest.raises(ConfigError, match="SEMGRAPH_EMBEDDING_QUANTIZATION"):
        load_settings(embedding_quantization="int4")


def test_a_pipeline_openvino_cannot_run_falls_back_under_auto_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    odd = model_copy(tmp_path, {"pooling_mode_max_tokens": True})
    with pytest.raises(EmbeddingError, match="not supported"):
        pooling_mode(odd)
    assert choose_backend(load_settings(), odd) == ("torch", "cpu")
    with pytest.raises(ConfigError, match="not supported"):
        choose_backend(load_settings(embedding_backend="openvino"), odd)
    (tmp_path / "c").mkdir()
    assert pooling_mode(model_copy(tmp_path / "c", {"pooling_mode_cls_token": True})) == "cls"
    (odd / "1_Pooling" / "config.json").write_text("{broken")
    with pytest.raises(EmbeddingError, match="no readable Pooling"):
        pooling_mode(odd)


def test_model_ids_and_cache_keys_differ_per_backend_and_recipe() -> None:
    torch_id = Embedder(load_settings(embedding_backend="torch")).model_id
    ids = {
        torch_id,
        Embedder(load_settings(embedding_backend="openvino")).model_id,
        Embedder(
            load_settings(embedding_backend="openvino", embedding_quantization="fp32")
        ).model_id,
    }
    assert len(ids) == 3 and "openvino" not in torch_id
    keys = {
        export_key("m@1", "int8", 200),
        export_key("m@1", "int8", 100),
        export_key("m@1", "bf16", 200),
        export_key("m@2", "int8", 200),
    }
    assert len(keys) == 4
    assert export_key("m@1", "bf16", 200) == export_key("m@1", "bf16", 100)  # no calibration
    assert "/" not in export_key("../../etc/passwd@x", "int8", 200)


def test_verify_names_each_kind_of_bad_entry(tmp_path: Path) -> None:
    key = "k"
    entry = tmp_path / key
    assert verify(entry, key) == "missing"
    entry.write_text("a file")
    assert verify(entry, key) == "not a directory"
    entry.unlink()
    entry.mkdir()
    assert str(verify(entry, key)).startswith("manifest unreadable")
    for name, data in (("model.xml", b"<xml/>"), ("model.bin", b"\0" * 100)):
        (entry / name).write_bytes(data)
    files = {
        n: {
            "size": (entry / n).stat().st_size,
            "sha256": hashlib.sha256((entry / n).read_bytes()).hexdigest(),
        }
        for n in ("model.xml", "model.bin")
    }
    (entry / "manifest.json").write_text(json.dumps({"key": "other", "files": files}))
    assert verify(entry, key) == "manifest of another export"
    (entry / "manifest.json").write_text(json.dumps({"key": key, "files": files}))
    assert verify(entry, key) is None
    (entry / "model.bin").write_bytes(b"\1" * 100)  # same size, other bytes
    assert verify(entry, key) == "model.bin does not match its checksum"
    (entry / "model.bin").unlink()
    (entry / "model.bin").symlink_to(entry / "model.xml")
    assert verify(entry, key) == "model.bin missing"
    (entry / "manifest.json").write_text(json.dumps({"key": key, "files": {"a": 1}}))
    assert verify(entry, key) == "manifest lists other files"
    (entry / "manifest.json").write_text('"a string"')
    assert verify(entry, key) == "manifest of another export"


def test_model_config_readers(tmp_path: Path) -> None:
    model = default_model_dir()
    assert max_seq_length(model) == 256 and transformer_dir(model) == model.resolve()
    assert max_seq_length(tmp_path) == 512  # no configs: BERT's limit
    (tmp_path / "sentence_bert_config.json").write_text('{"max_seq_length": -3}')
    (tmp_path / "config.json").write_text('{"max_position_embeddings": 128}')
    assert max_seq_length(tmp_path) == 128
    # sentence-transformers 6 keeps it in the tokenizer's config; "no limit" is not a bound
    (tmp_path / "tokenizer_config.json").write_text('{"model_max_length": 100}')
    assert max_seq_length(tmp_path) == 100
    (tmp_path / "tokenizer_config.json").write_text('{"model_max_length": 1e30}')
    assert max_seq_length(tmp_path) == 128
    (tmp_path / "tokenizer_config.json").write_text('{"model_max_length": true}')
    assert max_seq_length(tmp_path) == 128
    (tmp_path / "modules.json").write_text(
        '[{"type": "sentence_transformers.models.Transformer", "path": "0_T"}]'
    )
    assert transformer_dir(tmp_path) == (tmp_path / "0_T").resolve()
    (tmp_path / "modules.json").write_text(
        '[{"type": "sentence_transformers.models.Transformer", "path": "../../etc"}]'
    )
    assert transformer_dir(tmp_path) == tmp_path  # hostile: outside the model directory
    (tmp_path / "modules.json").write_text("[1, 2]")
    assert transformer_dir(tmp_path) == tmp_path
    assert cpu_threads(3) == 3 and cpu_threads(0) >= 1


def test_a_token_bound_is_part_of_the_model_id_and_never_above_the_models_own() -> None:
    from semgraph.search.backend import token_bound

    own = max_seq_length(default_model_dir())
    for backend in ("torch", "openvino"):
        plain = Embedder(load_settings(embedding_backend=backend, embedding_max_tokens=0))
        bounded = Embedder(load_settings(embedding_backend=backend, embedding_max_tokens=64))
        assert bounded.model_id == plain.model_id + "+max64tok"
        default = Embedder(load_settings(embedding_backend=backend)).model_id
        assert default == plain.model_id + "+max128tok"
    assert token_bound(load_settings(embedding_max_tokens=0), default_model_dir()) == own
    assert token_bound(load_settings(), default_model_dir()) == min(own, 128)
    assert token_bound(load_settings(embedding_max_tokens=64), default_model_dir()) == 64
    assert token_bound(load_settings(embedding_max_tokens=own * 10), default_model_dir()) == own
    with pytest.raises(ConfigError):
        load_settings(embedding_max_tokens=-1)
