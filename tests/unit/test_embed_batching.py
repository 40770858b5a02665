"""embed: token-bounded batch plans (pure logic) and the window's byte estimate."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from semgraph.config import load_settings
from semgraph.errors import ConfigError
from semgraph.model import Chunk
from semgraph.search.documents import PENDING_OVERHEAD_BYTES, PendingChunk, pending_bytes
from semgraph.search.embed import plan_batches


def test_long_texts_get_smaller_batches_and_order_is_longest_first() -> None:
    lengths = [10, 256, 40, 256, 256, 12, 256, 40]
    plan = plan_batches(lengths, max_batch=64, max_tokens=512)
    assert plan == [[1, 3], [4, 6], [2, 7, 5, 0]]  # 2x256; 2x256; 4x40 (ties in input order)


def test_batch_count_caps_short_texts() -> None:
    plan = plan_batches([3] * 10, max_batch=4, max_tokens=10_000)
    assert [len(b) for b in plan] == [4, 4, 2]


def test_a_text_longer_than_the_budget_is_a_batch_of_its_own() -> None:
    assert plan_batches([900, 5, 5], max_batch=8, max_tokens=100) == [[0], [1, 2]]


def test_empty_and_zero_lengths() -> None:
    assert plan_batches([], max_batch=4, max_tokens=16) == []
    assert plan_batches([0, 0, 0], max_batch=2, max_tokens=16) == [[0, 1], [2]]


@pytest.mark.parametrize(("max_batch", "max_tokens"), [(0, 10), (3, 0), (-1, -1)])
def test_bad_limits_are_refused(max_batch: int, max_tokens: int) -> None:
    with pytest.raises(ConfigError, match="positive"):
        plan_batches([1, 2], max_batch=max_batch, max_tokens=max_tokens)


@given(
    st.lists(st.integers(min_value=0, max_value=600), max_size=300),
    st.integers(min_value=1, max_value=80),
    st.integers(min_value=1, max_value=20_000),
)
def test_plan_covers_every_text_once_within_bounds(
    lengths: list[int], max_batch: int, max_tokens: int
) -> None:
    plan = plan_batches(lengths, max_batch=max_batch, max_tokens=max_tokens)
    flat = [i for batch in plan for i in batch]
    assert sorted(flat) == list(range(len(lengths)))
    for batch in plan:
        longest = max(lengths[i] for i in batch)
        assert 1 <= len(batch) <= max_batch
        assert len(batch) == 1 or len(batch) * longest <= max_tokens
        assert lengths[batch[0]] == longest  # longest first
    seen = [lengths[i] for i in flat]
    assert seen == sorted(seen, reverse=True)


def test_pending_bytes_counts_texts_and_the_vector() -> None:
    chunk = Chunk(1, 2, "x" * 1000, "h", "pkg.mod.fn", "function")
    pending = PendingChunk("pkg/mod.py", "python", 0, chunk, "t" * 3000, "k")
    expected = 3000 + 1000 + len("pkg/mod.py") + len("pkg.mod.fn") + 32 * 384
    assert pending_bytes(pending, 384) == expected + PENDING_OVERHEAD_BYTES
    bare = PendingChunk("p", "text", 0, Chunk(1, 1, "", "h"), "", "k")
    assert pending_bytes(bare, 0) == 1 + PENDING_OVERHEAD_BYTES


def test_memory_settings_are_validated() -> None:
    s = load_settings()
    assert (s.embedding_batch_tokens, s.malloc_mmap_threshold_bytes) == (4096, 131_072)
    assert s.search_embed_window_bytes == 32_000_000
    for bad in (
        {"embedding_batch_tokens": 0},
        {"search_embed_window_bytes": 10},
        {"malloc_mmap_threshold_bytes": -1},
        {"malloc_mmap_threshold_bytes": 64 * 1024 * 1024},
    ):
        with pytest.raises(ConfigError):
            load_settings(**bad)


def test_one_width_batches_never_mix_lengths() -> None:
    lengths = [32, 16, 32, 48, 16, 16, 32, 48]
    plan = plan_batches(lengths, max_batch=2, max_tokens=1000, one_width=True)
    assert plan == [[3, 7], [0, 2], [6], [1, 4], [5]]
    assert all(len({lengths[i] for i in b}) == 1 for b in plan)
    # without one_width the same lengths share batches
    assert plan_batches(lengths, max_batch=8, max_tokens=1000) == [[3, 7, 0, 2, 6, 1, 4, 5]]
    with pytest.raises(ConfigError):
        load_settings(embedding_pad_multiple=0)
