"""Index and alias names.

A repository's alias is ``<prefix>-<repo>`` and each run loads a fresh staging index
``<prefix>-<repo>--<run>``. ``<repo>`` and ``<run>`` are lower-case slugs that never contain
``--`` (a key that had to be changed to become legal also gets a short hash of the original,
so two different keys never share a name), hence a staging name can never equal another
repository's alias name.
"""

from __future__ import annotations

import hashlib
import re

from semgraph.errors import SearchRequestError

REPO_SLUG_MAX = 150
RUN_SLUG_MAX = 64

_ILLEGAL = re.compile(r"[^a-z0-9_.]+")
_DASHES = re.compile(r"-{2,}")


def slug(value: str, max_len: int) -> str:
    """A lower-case, index-name-legal slug of ``value`` that never contains ``--``."""
    text = _DASHES.sub("-", _ILLEGAL.sub("-", value.lower())).strip("-.")
    lossless = bool(text) and text == value and len(text) <= max_len
    if lossless:
        return text
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    text = text[: max_len - 9].rstrip("-.")
    return f"{text}-{digest}" if text else digest


def alias_name(prefix: str, repo_key: str) -> str:
    return f"{prefix}-{slug(repo_key, REPO_SLUG_MAX)}"


def staging_name(prefix: str, repo_key: str, run_id: str) -> str:
    return f"{alias_name(prefix, repo_key)}--{slug(run_id, RUN_SLUG_MAX)}"


def check_ours(prefix: str, name: str) -> None:
    """Refuse a name that is not one single index under our prefix (no wildcard, no list)."""
    if not name.startswith(f"{prefix}-") or any(c in name for c in "*,?"):
        raise SearchRequestError(f"refusing to touch {name!r}: not a single semgraph index")
