"""Ship a trained embedder with semgraph: the forms the product loads, their checksums and
a model card, under ``src/semgraph/embedders/<name>/``.

    PYTHONPATH=src python -m train.embedder.ship --run /var/tmp/semgraph-embed-run2 \\
        --name semgraph-code-minilm --facts FACTS.json

What it writes (into a temporary directory beside the destination, renamed into place last):

- **the torch form**: the sentence-transformers directory (configs, tokenizer, pooling and
  normalisation) with its weights stored as float16 safetensors, half the size of float32.
  ``config.json`` keeps ``dtype: float32``, so torch loads them as float32 (on a GPU as on a
  CPU) and the vectors differ from the trained weights only by float16 rounding;
- **the int8 OpenVINO form**: the product's own export (:mod:`semgraph.search.openvino_cache`,
  the same child process and calibration texts a fresh install would run) of the torch form
  above, under ``openvino/<key>/``. The key names the model's content, the recipe and the
  OpenVINO and NNCF versions, so the product uses this export only with the tool versions
  that built it (``constraints.txt`` pins them) and exports its own otherwise;
- ``SHA256SUMS`` of every file, which the product checks before it loads the model;
- ``MODEL_CARD.md``: the data, the licences, the training run, the evaluations and how to
  rebuild, from the run's own files (``args.json``, ``prep/stats.json``, ``eval-final.json``),
  the data manifest, and ``--facts`` (a JSON file of the product's measured figures).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from semgraph.search import openvino_cache
from semgraph.search.model_files import SHIPPED_ROOT, SUMS_FILE, model_fingerprint, sha256_file

CALIBRATION_TEXTS = 200  # the product's default embedding_calibration_texts
_COPIED = (
    "modules.json",
    "config.json",
    "config_sentence_transformers.json",
    "sentence_bert_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "1_Pooling/config.json",
    "2_Normalize/config.json",
)


def half_weights(source: Path, dest: Path) -> None:
    """The safetensors weights as float16 (float32 tensors only; others as they are)."""
    import torch  # heavy: loaded when shipping
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(source))
    out = {
        k: (v.half() if v.dtype == torch.float32 else v).contiguous() for k, v in tensors.items()
    }
    save_file(out, str(dest), metadata={"format": "pt"})
    dest.chmod(0o644)


def write_sums(model_dir: Path) -> None:
    lines = [
        f"{sha256_file(path)}  {path.relative_to(model_dir).as_posix()}"
        for path in sorted(model_dir.rglob("*"))
        if path.is_file() and path.name != SUMS_FILE
    ]
    (model_dir / SUMS_FILE).write_text("\n".join(lines) + "\n")


def build(model: Path, dest: Path, card: str) -> Path:
    tmp = dest.with_name(f".{dest.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in _COPIED:
        if (model / name).is_file():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(model / name, tmp / name)
    config = json.loads((tmp / "config.json").read_text())
    config["dtype"] = "float32"  # load the float16 file as float32
    (tmp / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    half_weights(model / "model.safetensors", tmp / "model.safetensors")
    # the export reads the model where it will live: its fingerprint names the key
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    fingerprint = model_fingerprint(dest)
    key = openvino_cache.export_key(fingerprint, "int8", CALIBRATION_TEXTS)
    exports = dest / openvino_cache.SHIPPED_EXPORTS
    exports.mkdir()
    openvino_cache._export(exports / key, key, dest, "int8", CALIBRATION_TEXTS)
    (dest / "MODEL_CARD.md").write_text(card)
    write_sums(dest)
    return dest


def _table(rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    return out + ["| " + " | ".join(r) + " |" for r in rows[1:]]


def _recall_rows(evaluation: dict[str, Any]) -> list[str]:
    """The valid-split figures of ``train.embedder.evaluate`` (base and trained, per language)."""
    rows = [["model", "language", "n", "recall@1", "recall@5", "recall@10", "MRR@10"]]
    for model, langs in evaluation.items():
        label = "base (all-MiniLM-L6-v2)" if model == "base" else "trained"
        for lang, m in sorted(langs.items()):
            rows.append(
                [label, lang, str(m.get("n", 0))]
                + [f"{m.get(k, 0):.3f}" for k in ("recall@1", "recall@5", "recall@10", "mrr@10")]
            )
    return _table(rows)


def card_text(name: str, run: Path, manifest: dict[str, Any], extra: dict[str, Any]) -> str:
    """The model card, from the training run's files, the data manifest and ``extra``
    (sections of measured product figures: section -> lines)."""
    args = json.loads((run / "args.json").read_text())
    stats = json.loads((run / "prep" / "stats.json").read_text())
    evaluation = json.loads((run / "eval-final.json").read_text())
    used = [s for s in manifest["sources"] if s.get("status") == "ok"]
    licences = Counter(str(s.get("licence")) for s in used)
    by_registry = Counter(str(s.get("registry")) for s in used)
    lines = [
        f"# {name}",
        "",
        "A code-search embedder: all-MiniLM-L6-v2 (6 layers, 384 dimensions, 22.7 M parameters)",
        "fine-tuned on documentation summary -> code pairs. semgraph embeds each chunk's first",
        "128 tokens with it. Licence: Apache-2.0, the base model's; the training data is",
        "permissively licensed code (below).",
        "",
        "## Forms",
        "",
        "- `model.safetensors`: the torch form, float16 weights loaded as float32.",
        "- `openvino/<key>/`: the int8 OpenVINO form (NNCF static quantisation, calibrated on",
        "  Python standard-library functions), used on CPUs with the OpenVINO and NNCF versions",
        "  named in its key.",
        "- `SHA256SUMS`: every file's checksum, checked before the model loads.",
        "",
        "## Data",
        "",
        f"{manifest['pairs_kept']:,} pairs built by `train/embedder/build_data.py` from "
        f"{len(used)} packages ({', '.join(f'{k} {v}' for k, v in sorted(by_registry.items()))}),",
        "each fetched by its registry's own client; `train/embedder/manifest.json` lists every",
        "source with its version, archive sha256 and licence.",
        "",
        "Licences: " + ", ".join(f"{k} {v}" for k, v in licences.most_common()) + ".",
        "",
        "Held out of training: every package of semgraph's evaluations (`heldout.json`:",
        "the outside evaluation's packages, the CodeSearchNet-style test's packages, and the",
        "repositories of `bench/search/eval/sources.json`), and the valid split (whole packages).",
        "",
        "## Training",
        "",
        f"`train/embedder/train.py`, seed {args['seed']}: {stats['sampled']:,} sampled train "
        f"pairs, a BM25 hard negative each from the same package; the consistency filter (the "
        f"base model ranks the pair's code in its top {stats['consistency_k']}) dropped "
        f"{stats['consistency_dropped']:,} and kept {stats['kept']:,}. Contrastive loss with "
        f"in-batch and hard negatives (scale {args['scale']}), batch {args['batch_size']}, "
        f"{args['steps']} steps, learning rate {args['lr']} with {args['warmup']} warm-up, "
        f"on {args['device']}.",
        "",
        "## Evaluation",
        "",
        "Held-out packages (`train/embedder/evaluate.py`: each query against every code of its",
        "language in the valid split):",
        "",
        *_recall_rows(evaluation),
        "",
    ]
    for section, body in extra.items():
        lines += [f"## {section}", "", *(body if isinstance(body, list) else [str(body)]), ""]
    lines += [
        "## Rebuild",
        "",
        "```bash",
        "PYTHONPATH=src python -m train.embedder.build_data --out /var/tmp/semgraph-embed-data",
        f"PYTHONPATH=src python -m train.embedder.train --steps {args['steps']} "
        f"--max-pairs {args['max_pairs']} --lr {args['lr']} --out RUN",
        "PYTHONPATH=src python -m train.embedder.evaluate --model RUN/final \\",
        "    --out RUN/eval-final.json",
        f"PYTHONPATH=src python -m train.embedder.ship --run RUN --name {name} --facts FACTS.json",
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--run", type=Path, required=True, help="the training run's directory")
    ap.add_argument("--name", required=True, help="the shipped name (a directory name)")
    ap.add_argument("--facts", type=Path, help="JSON: more card sections (section -> lines)")
    ap.add_argument("--manifest", type=Path, default=Path(__file__).with_name("manifest.json"))
    ap.add_argument(
        "--card-only",
        action="store_true",
        help="rewrite the shipped model's card and sums only (figures measured after shipping)",
    )
    ap.add_argument("--root", type=Path, default=SHIPPED_ROOT, help="where shipped models live")
    args = ap.parse_args(argv)
    if not args.name.replace("-", "").isalnum():
        ap.error("--name: letters, digits and '-' only")
    extra = json.loads(args.facts.read_text()) if args.facts else {}
    manifest = json.loads(args.manifest.read_text())
    card = card_text(args.name, args.run, manifest, extra)
    dest = args.root / args.name
    if args.card_only:
        (dest / "MODEL_CARD.md").write_text(card)
        write_sums(dest)
    else:
        build(args.run / "final", dest, card)
    for path in sorted(dest.rglob("*")):
        if path.is_file():
            print(f"{path.stat().st_size:>12,}  {path.relative_to(dest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
