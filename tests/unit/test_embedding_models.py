"""Which model the ``embedding_model`` setting names, and whether a shipped model is intact:
names, paths, checksums, and the shipped OpenVINO export taking the cache's place."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from semgraph.config import DEFAULT_EMBEDDING_MODEL, load_settings
from semgraph.errors import ConfigError, EmbeddingError
from semgraph.search import model_files, openvino_cache
from semgraph.search.embed import Embedder
from semgraph.search.model_files import (
    BASE_MODEL,
    default_model_dir,
    model_names,
    read_sums,
    resolve_model_dir,
    verify_shipped,
)


def _write_sums(model_dir: Path) -> None:
    lines = []
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(model_dir).as_posix()
        if rel != model_files.SUMS_FILE:
            lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {rel}")
    (model_dir / model_files.SUMS_FILE).write_text("\n".join(lines) + "\n")


def _fake_model(root: Path, name: str) -> Path:
    model = root / name
    (model / "1_Pooling").mkdir(parents=True)
    (model / "modules.json").write_text(
        json.dumps([{"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}])
    )
    (model / "1_Pooling" / "config.json").write_text('{"word_embedding_dimension": 5}')
    (model / "model.safetensors").write_bytes(b"weights" * 1000)
    _write_sums(model)
    return model


@pytest.fixture
def shipped_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "embedders"
    root.mkdir()
    monkeypatch.setattr(model_files, "SHIPPED_ROOT", root)
    monkeypatch.setattr(model_files, "_verified", {})
    return root


def test_the_default_and_the_base_model_are_names_that_resolve() -> None:
    assert DEFAULT_EMBEDDING_MODEL in model_names()
    assert resolve_model_dir(BASE_MODEL) == default_model_dir()
    assert resolve_model_dir("~/models/x") == Path("~/models/x").expanduser()


def test_a_shipped_model_is_named_by_its_directory(shipped_root: Path) -> None:
    _fake_model(shipped_root, "code-a")
    (shipped_root / "no-sums").mkdir()  # a directory without sums is not a model
    assert model_names() == [BASE_MODEL, "code-a"]
    assert resolve_model_dir("code-a") == shipped_root / "code-a"
    assert resolve_model_dir("no-sums") == Path("no-sums")  # then it is a relative path
    e = Embedder(load_settings(embedding_model="code-a"))
    assert e.dims == 5 and e.model_id.startswith("code-a@")


def test_verify_shipped_finds_a_changed_missing_or_forged_file(shipped_root: Path) -> None:
    model = _fake_model(shipped_root, "code-a")
    assert verify_shipped(model) is None
    assert verify_shipped(default_model_dir()) is None  # no sums: not a shipped model
    model_files._verified.clear()
    (model / "model.safetensors").write_bytes(b"weights" * 999 + b"weightX")
    assert verify_shipped(model) == "model.safetensors does not match its checksum"
    model_files._verified.clear()
    (model / "model.safetensors").unlink()
    assert verify_shipped(model) == "model.safetensors does not match its checksum"
    for hostile in ("../../etc/passwd", "/etc/passwd", "x"):
        model_files._verified.clear()
        (model / model_files.SUMS_FILE).write_text(f"{'0' * 64}  {hostile}\n"[-200:])
        problem = verify_shipped(model)
        if hostile == "x":
            assert problem == "x does not match its checksum"
        else:
            assert problem is not None and "bad line" in problem
    model_files._verified.clear()
    (model / model_files.SUMS_FILE).write_bytes(b"\xff\xfe not utf-8")
    assert "unreadable" in str(verify_shipped(model))
    (model / model_files.SUMS_FILE).write_text("not a sums line\n")
    with pytest.raises(ValueError, match="bad line"):
        read_sums(model)


def test_a_damaged_shipped_model_refuses_to_load_with_a_clear_error(shipped_root: Path) -> None:
    model = _fake_model(shipped_root, "code-a")
    (model / "model.safetensors").write_bytes(b"tampered")
    e = Embedder(load_settings(embedding_model="code-a"))
    with pytest.raises(EmbeddingError, match=r"shipped model code-a is damaged .*reinstall"):
        e.embed(["x"])


@pytest.mark.parametrize("value", ["", "a\x00b", "line\nbreak", "x" * 5000])
def test_bad_model_settings_are_refused(value: str) -> None:
    with pytest.raises(ConfigError, match="SEMGRAPH_EMBEDDING_MODEL"):
        load_settings(embedding_model=value)


def test_an_unknown_name_lists_the_names(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"the names are {BASE_MODEL}"):
        Embedder(load_settings(embedding_model=str(tmp_path / "no-such-model")))


def _entry(root: Path, key: str, payload: bytes) -> Path:
    entry = root / key
    entry.mkdir(parents=True)
    files = {}
    for name in ("model.xml", "model.bin"):
        (entry / name).write_bytes(payload + name.encode())
        files[name] = {
            "size": (entry / name).stat().st_size,
            "sha256": hashlib.sha256((entry / name).read_bytes()).hexdigest(),
        }
    (entry / "manifest.json").write_text(json.dumps({"key": key, "files": files}))
    return entry


def test_a_shipped_export_of_the_same_key_is_used_without_exporting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported: list[Path] = []

    def fake_export(entry: Path, key: str, *args: object) -> None:
        exported.append(entry)
        _entry(entry.parent, key, b"local")

    monkeypatch.setattr(openvino_cache, "_export", fake_export)
    model = tmp_path / "model"
    key = openvino_cache.export_key("m@1", "int8", 200)
    shipped = _entry(model / openvino_cache.SHIPPED_EXPORTS, key, b"shipped")
    cache = tmp_path / "cache"
    xml = openvino_cache.ensure_export(cache, model, "m@1", "int8", 200)
    assert xml == shipped / "model.xml" and exported == []
    # another recipe (calibration size) is not the shipped one: exported into the cache
    xml = openvino_cache.ensure_export(cache, model, "m@1", "int8", 64)
    assert xml.parent.parent == cache and len(exported) == 1
    # a damaged shipped export is never used: the cache's own export takes its place
    (shipped / "model.bin").write_bytes(b"tampered")
    xml = openvino_cache.ensure_export(cache, model, "m@1", "int8", 200)
    assert xml.parent.parent == cache and len(exported) == 2


def test_sentence_transformers_6_configs_are_read_like_the_old_ones(tmp_path: Path) -> None:
    from semgraph.search.model_files import declared_dims
    from semgraph.search.openvino_runtime import pooling_mode

    model = tmp_path / "st6"
    (model / "1_Pooling").mkdir(parents=True)
    types = ("base.modules.transformer.Transformer", "sentence_transformer.modules.pooling.Pooling")
    (model / "modules.json").write_text(
        json.dumps(
            [
                {"type": f"sentence_transformers.{t}", "path": p}
                for t, p in zip(types, ("", "1_Pooling"), strict=True)
            ]
        )
    )
    pooling = model / "1_Pooling" / "config.json"
    pooling.write_text('{"embedding_dimension": 384, "pooling_mode": "mean"}')
    assert declared_dims(model) == 384 and pooling_mode(model) == "mean"
    pooling.write_text('{"embedding_dimension": 384, "pooling_mode": "cls"}')
    assert pooling_mode(model) == "cls"
    pooling.write_text('{"embedding_dimension": 384, "pooling_mode": "max"}')
    with pytest.raises(EmbeddingError, match="not supported"):
        pooling_mode(model)


def test_the_default_ships_intact_with_an_export_for_the_pinned_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fresh install loads the default model without exporting it: its sums hold, and its
    shipped int8 export is keyed by the OpenVINO and NNCF versions constraints.txt pins (when
    they change, rebuild the export: ``python -m train.embedder.ship``)."""
    from semgraph.search.backend import choose_backend
    from semgraph.search.model_files import SHIPPED_ROOT, model_fingerprint

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    model = resolve_model_dir(DEFAULT_EMBEDDING_MODEL)
    assert model.parent == SHIPPED_ROOT and verify_shipped(model) is None
    key = openvino_cache.export_key(model_fingerprint(model), "int8", 200)
    assert openvino_cache.verify(model / openvino_cache.SHIPPED_EXPORTS / key, key) is None
    assert choose_backend(load_settings(), model) == ("openvino", "cpu")
