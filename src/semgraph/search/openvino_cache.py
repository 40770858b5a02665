"""The on-disk cache of exported OpenVINO models, under ``<state_dir>/models``.

One directory per (model content, quantisation, export recipe, OpenVINO and NNCF versions):
:func:`export_key` names it, so a new model, a different quantisation or a tool upgrade
exports again, and never reads another's files. A directory holds ``model.xml``,
``model.bin`` and ``manifest.json`` (the key and each file's size and sha256).

* Written atomically: the export runs in a child process (:mod:`semgraph.search
  .openvino_export`, the only place that imports torch and NNCF) into a temporary directory
  next to the final one, the manifest is written last, and the directory is renamed into
  place.
* Verified on load: the manifest must name this key and every file must match its size and
  checksum; a missing, corrupt or foreign entry (a file, a symlink, a directory without a
  valid manifest) is moved aside and exported again.
* Shipped first: a model directory may carry its own entries under ``openvino/<key>/``
  (semgraph's shipped models do, built by ``train/embedder/ship.py``). One whose key matches
  (same model, recipe and tool versions) and whose files match their checksums is used as
  is, so a fresh install never exports; otherwise the cache is used as above.
* Concurrent first use: an exclusive ``flock`` on ``<key>.lock`` around check-and-export, so
  two processes export once and the second reads the first's result.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from semgraph.errors import EmbeddingError
from semgraph.logs import event
from semgraph.search.model_files import sha256_file

log = logging.getLogger(__name__)

_FILES = ("model.xml", "model.bin")
#: a model directory's own exports, one cache-style entry per key (shipped models carry one)
SHIPPED_EXPORTS = "openvino"
# names openvino_export.calibration_texts: changes when the calibration texts change
CALIBRATION_RECIPE = "stdlib-functions-v1"
_EXPORT_TIMEOUT_S = 3600
_HEARTBEAT_S = 10.0  # a log line at least this often while the export child runs


def tool_versions() -> str:
    """The versions that shape an exported model (OpenVINO, and NNCF for int8)."""
    parts = []
    for name in ("openvino", "nncf"):
        try:
            parts.append(f"{name}{metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name}-none")
    return "-".join(parts)


def export_key(fingerprint: str, quantization: str, calibration_texts: int) -> str:
    """The cache entry's name: the model's id, the quantisation and a hash of the recipe."""
    recipe = f"{CALIBRATION_RECIPE}:{calibration_texts}" if quantization == "int8" else "plain"
    digest = hashlib.sha256(f"{fingerprint}\0{quantization}\0{recipe}\0{tool_versions()}".encode())
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in fingerprint)
    return f"{safe}-openvino-{quantization}-{digest.hexdigest()[:12]}"


def verify(entry: Path, key: str) -> str | None:
    """None when ``entry`` is a complete export for ``key``; else why it is not."""
    if entry.is_symlink() or not entry.is_dir():
        return "missing" if not entry.exists() and not entry.is_symlink() else "not a directory"
    try:
        manifest = json.loads((entry / "manifest.json").read_text())
    except (OSError, ValueError) as exc:
        return f"manifest unreadable ({exc.__class__.__name__})"
    if not isinstance(manifest, dict) or manifest.get("key") != key:
        return "manifest of another export"
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != set(_FILES):
        return "manifest lists other files"
    for name in _FILES:
        path = entry / name
        want = files[name]
        if path.is_symlink() or not path.is_file() or not isinstance(want, dict):
            return f"{name} missing"
        if path.stat().st_size != want.get("size") or sha256_file(path) != want.get("sha256"):
            return f"{name} does not match its checksum"
    return None


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def ensure_export(
    cache_root: Path,
    model_dir: Path,
    fingerprint: str,
    quantization: str,
    calibration_texts: int,
) -> Path:
    """The verified ``model.xml`` for this model and quantisation: the model's own shipped
    export when it has one for this key (same recipe and tool versions), else the cache's,
    exported first if needed."""
    key = export_key(fingerprint, quantization, calibration_texts)
    shipped = model_dir / SHIPPED_EXPORTS / key
    if shipped.is_dir():
        problem = verify(shipped, key)
        if problem is None:
            return shipped / "model.xml"
        event(
            log,
            logging.WARNING,
            "embedding_shipped_export_unusable",
            entry=str(shipped),
            why=problem,
        )
    entry = cache_root / key
    try:
        cache_root.mkdir(parents=True, exist_ok=True)
        if cache_root.is_symlink() or not cache_root.is_dir():
            raise NotADirectoryError(str(cache_root))
        with _locked(cache_root / f"{key}.lock"):
            problem = verify(entry, key)
            if problem is None:
                return entry / "model.xml"
            if problem != "missing":
                event(
                    log, logging.WARNING, "embedding_cache_rebuilt", entry=str(entry), why=problem
                )
                _remove(entry)
            _export(entry, key, model_dir, quantization, calibration_texts)
    except OSError as exc:
        raise EmbeddingError(
            f"cannot write the OpenVINO model cache {cache_root}: {exc} (set SEMGRAPH_STATE_DIR "
            "to a writable directory, or SEMGRAPH_EMBEDDING_BACKEND=torch)"
        ) from exc
    problem = verify(entry, key)
    if problem is not None:
        raise EmbeddingError(
            f"the OpenVINO export {entry} is unusable right after export: {problem}"
        )
    return entry / "model.xml"


def _export(entry: Path, key: str, model_dir: Path, quantization: str, n: int) -> None:
    tmp = entry.with_name(f".{entry.name}.tmp-{os.getpid()}")
    _remove(tmp)
    started = time.perf_counter()
    event(
        log,
        logging.INFO,
        "embedding_export_started",
        "exporting the embedding model to OpenVINO (once per model; takes minutes)",
        model=str(model_dir),
        quantization=quantization,
    )
    cmd = [sys.executable, "-m", "semgraph.search.openvino_export"]
    cmd += [str(model_dir), str(tmp), quantization, str(n)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    returncode, stderr = _run_with_heartbeat(cmd, env, started)
    if returncode is None:
        _remove(tmp)
        raise EmbeddingError(f"OpenVINO export of {model_dir} timed out")
    if returncode != 0:
        _remove(tmp)
        tail = stderr.strip().splitlines()[-5:]
        raise EmbeddingError(f"OpenVINO export of {model_dir} failed: {' | '.join(tail)}")
    files = {
        name: {"size": (tmp / name).stat().st_size, "sha256": sha256_file(tmp / name)}
        for name in _FILES
    }
    manifest = {"key": key, "model_dir": str(model_dir), "files": files, "created": time.time()}
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
    os.rename(tmp, entry)
    event(
        log,
        logging.INFO,
        "embedding_export_done",
        entry=str(entry),
        seconds=round(time.perf_counter() - started, 1),
        steps_s=export_steps(stderr),
    )


def export_steps(stderr: str) -> dict[str, float]:
    """Seconds per step of the export child (imports, load, convert, calibration texts,
    quantize, save), from its last ``phases`` line; empty when it printed none."""
    prefix = "openvino_export: phases "  # openvino_export.PHASES_PREFIX (it imports torch)
    for line in reversed(stderr.splitlines()):
        if line.startswith(prefix):
            with contextlib.suppress(ValueError, TypeError):
                found = json.loads(line[len(prefix) :])
                if isinstance(found, dict):
                    return {str(k): float(v) for k, v in found.items()}
    return {}


def _run_with_heartbeat(
    cmd: list[str], env: dict[str, str], started: float
) -> tuple[int | None, str]:
    """Run the export child, logging ``embedding_export_running`` every ``_HEARTBEAT_S``
    (the export takes minutes and prints nothing); ``(None, ...)`` when it timed out."""
    with subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as child:
        chunks: list[str] = []
        while True:
            try:
                _, err = child.communicate(timeout=_HEARTBEAT_S)
                chunks.append(err or "")
                return child.returncode, "".join(chunks)
            except subprocess.TimeoutExpired:
                elapsed = time.perf_counter() - started
                if elapsed > _EXPORT_TIMEOUT_S:
                    child.kill()
                    child.communicate()
                    return None, ""
                event(
                    log,
                    logging.INFO,
                    "embedding_export_running",
                    f"OpenVINO export of the embedding model still running: {elapsed:.0f} s",
                    seconds=round(elapsed),
                )
