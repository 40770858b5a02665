"""Export a sentence-transformers model to OpenVINO IR, optionally quantised to static int8.

Run only as a child process (``python -m semgraph.search.openvino_export MODEL_DIR OUT_DIR
QUANTIZATION CALIBRATION_TEXTS``) by :mod:`semgraph.search.openvino_cache`, so the worker that
asked for the model never imports torch or NNCF: this module is the only one on the CPU path
that does (at its top: nothing else imports it), and it exits when the export is written.

* The model's Transformer module (the directory named in ``modules.json``) is loaded with
  ``transformers`` from local files only and converted with ``openvino.convert_model`` from an
  example input, with dynamic batch and sequence dimensions. Its output is the token
  embeddings (``last_hidden_state``); pooling and normalisation stay outside the graph
  (:mod:`semgraph.search.openvino_runtime`), so they are exact fp32.
* ``int8``: NNCF post-training quantisation with static activation scales (``ModelType
  .TRANSFORMER``), calibrated on functions taken from the Python standard library's own
  sources (deterministic: sorted files, every n-th function), never from a hub. Static
  scales make a text's vector independent of the batch it is embedded in (dynamic int8
  computes scales per batch and does not).
* ``bf16`` / ``fp32``: the converted graph as is; the precision is chosen when it is compiled.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

_STARTED = time.perf_counter()  # the heavy imports below are the export's first step

import nncf  # noqa: E402
import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402
from transformers import AutoModel  # noqa: E402

from semgraph.search.calibration import calibration_texts  # noqa: E402
from semgraph.search.model_files import max_seq_length, transformer_dir  # noqa: E402

_ATTRS = ("ids", "attention_mask", "type_ids")  # tokenizers.Encoding fields, in input order


PHASES_PREFIX = "openvino_export: phases "  # the last stderr line: seconds per step (JSON)


def export(model_dir: Path, out_dir: Path, quantization: str, n_calibration: int) -> None:
    steps: dict[str, float] = {"import": time.perf_counter() - _STARTED}
    lap = time.perf_counter()

    def done(step: str) -> None:
        nonlocal lap
        steps[step] = time.perf_counter() - lap
        lap = time.perf_counter()

    source = transformer_dir(model_dir)
    model = AutoModel.from_pretrained(str(source), local_files_only=True)
    model.eval()
    max_len = max_seq_length(model_dir)
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_len)
    tokenizer.enable_padding(pad_id=0)
    names = ["input_ids", "attention_mask", "token_type_ids"]

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    done("load")
    sample = tokenizer.encode_batch(["def f(x):\n    return x + 1", "class A: pass"])
    example = tuple(torch.tensor([getattr(e, a) for e in sample]) for a in _ATTRS)
    with torch.no_grad():
        ov_model = ov.convert_model(
            TokenEmbeddings(model),
            example_input=example,
            input=[(n, ov.PartialShape([-1, -1]), ov.Type.i64) for n in names],
        )
    print(f"openvino_export: converted {source}", file=sys.stderr, flush=True)
    done("convert")
    if quantization == "int8":
        texts = calibration_texts(n_calibration)
        items = []
        for i in range(0, len(texts), 8):
            batch = tokenizer.encode_batch(texts[i : i + 8])
            items.append(
                {
                    n: np.asarray([getattr(e, a) for e in batch], dtype=np.int64)
                    for n, a in zip(names, _ATTRS, strict=True)
                }
            )
        done("calibration_texts")
        ov_model = nncf.quantize(
            ov_model,
            nncf.Dataset(items),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(items),
        )
        print(
            f"openvino_export: quantised to int8 on {len(texts)} stdlib functions",
            file=sys.stderr,
            flush=True,
        )
        done("quantize")
    out_dir.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov_model, str(out_dir / "model.xml"), compress_to_fp16=False)
    done("save")
    rounded = {k: round(v, 1) for k, v in steps.items()}
    print(PHASES_PREFIX + json.dumps(rounded), file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: openvino_export MODEL_DIR OUT_DIR int8|bf16|fp32 N", file=sys.stderr)
        return 2
    model_dir, out_dir, quantization, n = Path(argv[0]), Path(argv[1]), argv[2], int(argv[3])
    if quantization not in ("int8", "bf16", "fp32"):
        print(f"unknown quantization {quantization!r}", file=sys.stderr)
        return 2
    export(model_dir, out_dir, quantization, n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
