"""Duplicate pairs, exact and near, removed in a stable order (the first one seen stays).

Exact: the code with its whitespace collapsed, hashed. Near: MinHash over the code's token
3-grams (:data:`PERMUTATIONS` hash functions from a fixed seed), banded for lookup
(:data:`BANDS` bands), a candidate kept out when its estimated Jaccard similarity to a kept
pair reaches :data:`NEAR`. The same code under two docstrings, a function copied between
packages or versions, a generated variant: each would be a false negative in a batch.
"""

from __future__ import annotations

import hashlib
import re
import zlib

import numpy as np
import numpy.typing as npt

PERMUTATIONS = 32
BANDS = 8
NEAR = 0.8
SHINGLE = 3
_PRIME = (1 << 61) - 1
_rng = np.random.RandomState(20240611)
_A = _rng.randint(1, 1 << 31, size=PERMUTATIONS, dtype=np.uint64)
_B = _rng.randint(0, 1 << 31, size=PERMUTATIONS, dtype=np.uint64)
_TOKEN = re.compile(r"\w+|[^\w\s]")


def exact_key(code: str) -> bytes:
    return hashlib.sha1(" ".join(code.split()).encode(), usedforsecurity=False).digest()


def signature(code: str) -> npt.NDArray[np.uint64]:
    """The MinHash signature of ``code``'s token 3-grams."""
    tokens = _TOKEN.findall(code)
    grams = {" ".join(tokens[i : i + SHINGLE]) for i in range(max(len(tokens) - SHINGLE + 1, 1))}
    hashes = np.fromiter((zlib.crc32(g.encode()) for g in grams), dtype=np.uint64, count=len(grams))
    mixed = (hashes[:, None] * _A[None, :] + _B[None, :]) % np.uint64(_PRIME)
    out: npt.NDArray[np.uint64] = mixed.min(axis=0)
    return out


class Deduper:
    """Remembers what was kept; :meth:`check` says whether a new code duplicates it."""

    def __init__(self) -> None:
        self._exact: set[bytes] = set()
        self._bands: list[dict[bytes, int]] = [{} for _ in range(BANDS)]
        self._sigs: list[npt.NDArray[np.uint64]] = []

    def check(self, code: str) -> str | None:
        """``"duplicate"``, ``"near_duplicate"``, or None (then the code counts as kept)."""
        key = exact_key(code)
        if key in self._exact:
            return "duplicate"
        sig = signature(code)
        rows = PERMUTATIONS // BANDS
        band_keys = [sig[b * rows : (b + 1) * rows].tobytes() for b in range(BANDS)]
        for band, bkey in zip(self._bands, band_keys, strict=True):
            other = band.get(bkey)
            if other is not None and float(np.mean(self._sigs[other] == sig)) >= NEAR:
                return "near_duplicate"
        self._exact.add(key)
        index = len(self._sigs)
        self._sigs.append(sig)
        for band, bkey in zip(self._bands, band_keys, strict=True):
            band.setdefault(bkey, index)
        return None
