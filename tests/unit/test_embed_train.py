"""The embedder's training script: data order, hard negatives, the consistency filter,
checkpoints and the embedded text (pure; tiny data; no model, no network, no GPU)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from semgraph.model import Chunk
from semgraph.search.embed import embedding_text
from train.embedder import checkpoint
from train.embedder.mining import (
    BM25,
    consistency_keep,
    mine_hard_negatives,
    near_copy,
    positive_ranks,
    tokens,
)
from train.embedder.texts import code_text, context_lines
from train.embedder.train import batch_indices


def _pair(
    i: int, query: str, code: str, package: str = "pkg", lang: str = "python"
) -> dict[str, Any]:
    return {
        "id": str(i),
        "query": query,
        "code": code,
        "package": package,
        "lang": lang,
        "path": f"src/{package}/mod{i}.py",
        "symbol": f"{package}.mod{i}.fn_{i}",
        "name": f"fn_{i}",
        "kind": "function",
        "module": f"{package}.mod{i}",
        "class": None,
        "calls": ["open", "load"],
        "start_line": 3,
        "end_line": 9,
    }


def test_data_order_is_a_function_of_the_seed_and_step() -> None:
    first = [batch_indices(10, 4, s, seed=7) for s in range(6)]
    again = [batch_indices(10, 4, s, seed=7) for s in range(6)]
    other = [batch_indices(10, 4, s, seed=8) for s in range(6)]
    assert first == again
    assert first != other
    flat = [i for b in first for i in b]
    assert sorted(flat[:10]) == list(range(10))  # each epoch is a permutation
    assert sorted(flat[10:20]) == list(range(10))
    assert flat[:10] != flat[10:20]  # a new order each epoch


def test_tokens_split_identifiers() -> None:
    assert tokens("getHTTPProxy(read_file)") == ["get", "http", "proxy", "read", "file"]


def test_bm25_ranks_the_matching_document_first() -> None:
    index = BM25([tokens("parse the date"), tokens("draw a circle"), tokens("date date parse")])
    scores = index.scores(tokens("parse date"))
    assert int(np.argmax(scores)) in (0, 2)
    assert scores[1] == 0


def test_hard_negative_is_never_the_positive_nor_a_copy() -> None:
    pairs = [
        _pair(0, "read the json config file", "def read_config(p):\n    return json.load(open(p))"),
        _pair(
            1, "read the json config file again", "def read_config(p):\n  return json.load(open(p))"
        ),
        _pair(2, "read the yaml config file", "def read_yaml(p):\n    return yaml.load(open(p))"),
        _pair(3, "unrelated thing", "def add(a, b):\n    return a + b"),
        _pair(4, "read the json config file", "def other_config(p):\n    return json.loads(p)"),
        _pair(5, "read json config", "def x(p):\n    return json.load(p)", package="other"),
    ]
    negatives = mine_hard_negatives(pairs, [0, 2, 3, 5])
    assert negatives[0] == 2  # 1 is a near-copy, 4 has the same query, 5 another package
    assert negatives[2] is not None and negatives[2] != 2
    assert negatives[5] is None  # alone in its package
    for anchor, negative in negatives.items():
        assert negative != anchor
        if negative is not None:
            assert pairs[negative]["package"] == pairs[anchor]["package"]
            assert not near_copy(pairs[anchor]["code"], pairs[negative]["code"])


def test_consistency_filter_counts() -> None:
    queries = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 0, 1]], dtype=np.float32)
    codes = np.eye(3, dtype=np.float32)  # query 1 prefers code 0 to its own
    ranks = positive_ranks(queries, codes, ["py", "py", "py"])
    assert ranks.tolist() == [0, 1, 0]
    assert int(consistency_keep(ranks, 1).sum()) == 2
    assert int(consistency_keep(ranks, 2).sum()) == 3
    split = positive_ranks(queries, codes, ["py", "go", "py"])
    assert split.tolist() == [0, 0, 0]  # pools are per language


def test_code_text_is_the_products_embedding_text() -> None:
    pair = _pair(1, "q", "def fn_1(x):\n    return x")
    chunk = Chunk(3, 9, pair["code"], "", symbol=pair["symbol"], kind="function")
    assert code_text(pair) == embedding_text(pair["path"], chunk)
    lines = context_lines(pair, frozenset({"module"}))
    assert lines is not None  # the product carries chunk context (semgraph.search.context)
    expected = embedding_text(pair["path"], chunk, context=lines)
    assert code_text(pair, frozenset({"module"})) == expected


class _Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 2)

    def save(self, path: str) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)
        torch.save(self.state_dict(), Path(path) / "weights.pt")


def test_checkpoint_round_trip_restores_step_optimizer_and_rng(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = _Tiny()
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (s + 1))
    model.layer(torch.ones(4)).sum().backward()
    opt.step()
    sched.step()
    random.seed(3)
    np.random.seed(3)
    for step in (1, 2, 3):
        checkpoint.save(tmp_path, step, model, opt, sched, {"loss_avg": 1.5})
    expected = (random.random(), float(np.random.rand()), float(torch.rand(1)))
    assert sorted(p.name for p in tmp_path.glob("checkpoint-*")) == [
        "checkpoint-0000002",
        "checkpoint-0000003",
    ]
    path = checkpoint.latest(tmp_path)
    assert path is not None and path.name == "checkpoint-0000003"
    state = checkpoint.load_state(path)
    assert state["step"] == 3 and state["extra"] == {"loss_avg": 1.5}
    model2 = _Tiny()
    opt2 = torch.optim.AdamW(model2.parameters(), lr=0.1)
    sched2 = torch.optim.lr_scheduler.LambdaLR(opt2, lambda s: 1.0 / (s + 1))
    opt2.load_state_dict(state["optimizer"])
    sched2.load_state_dict(state["scheduler"])
    assert sched2.last_epoch == sched.last_epoch
    assert opt2.state_dict()["state"][0]["step"] == opt.state_dict()["state"][0]["step"]
    checkpoint.set_rng_state(state["rng"])
    assert (random.random(), float(np.random.rand()), float(torch.rand(1))) == expected


def test_no_checkpoint_is_none(tmp_path: Path) -> None:
    assert checkpoint.latest(tmp_path) is None


@pytest.mark.parametrize("n,batch", [(3, 5), (7, 7)])
def test_batches_wrap_small_sets(n: int, batch: int) -> None:
    assert len(batch_indices(n, batch, 0, seed=1)) == batch


def test_shipping_halves_the_weights_and_sums_every_file(tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    from semgraph.search.model_files import read_sums, verify_shipped
    from train.embedder.ship import half_weights, write_sums

    source = tmp_path / "full.safetensors"
    save_file({"w": torch.full((4, 4), 1 / 3), "ids": torch.arange(4)}, str(source))
    model = tmp_path / "shipped"
    (model / "sub").mkdir(parents=True)
    half_weights(source, model / "model.safetensors")
    got = load_file(str(model / "model.safetensors"))
    assert got["w"].dtype == torch.float16 and got["ids"].dtype == torch.int64
    assert float(got["w"][0, 0]) == pytest.approx(1 / 3, abs=1e-3)
    (model / "sub" / "x.json").write_text("{}")
    write_sums(model)
    assert set(read_sums(model)) == {"model.safetensors", "sub/x.json"}
    assert verify_shipped(model) is None


def test_the_model_card_comes_from_the_runs_own_files(tmp_path: Path) -> None:
    from train.embedder.ship import card_text

    run = tmp_path / "run"
    (run / "prep").mkdir(parents=True)
    (run / "args.json").write_text(
        json.dumps(
            {"seed": "7", "steps": "300", "batch_size": "32", "lr": "5e-05", "warmup": "0.1"}
            | {"scale": "20.0", "device": "cpu", "max_pairs": "14000"}
        )
    )
    (run / "prep" / "stats.json").write_text(
        json.dumps({"sampled": 14000, "consistency_k": 10, "consistency_dropped": 5, "kept": 9})
    )
    figures = {"n": 3, "recall@1": 0.5, "recall@5": 0.75, "recall@10": 1.0, "mrr@10": 0.6}
    (run / "eval-final.json").write_text(
        json.dumps({"base": {"all": figures}, "/x/final": {"all": figures}})
    )
    manifest = {
        "pairs_kept": 12,
        "sources": [
            {"status": "ok", "registry": "pypi", "licence": "MIT"},
            {"status": "refused_licence", "registry": "pypi", "licence": "LGPL-2.1"},
        ],
    }
    card = card_text("code-x", run, manifest, {"Outside": ["kNN recall@5 0.9"]})
    assert card.startswith("# code-x\n")
    assert "Licences: MIT 1." in card and "LGPL" not in card
    assert "| trained | all | 3 | 0.500 | 0.750 | 1.000 | 0.600 |" in card
    assert "## Outside\n\nkNN recall@5 0.9" in card
    assert "--steps 300 --max-pairs 14000" in card
