"""Repository sources: what a user, a webhook or the API names (a git URL of any form, or a
local path), its canonical URL, and the repository key every store is keyed by.

Sources are checked here, before anything is enqueued: control characters, a leading ``-``
(an option to git), git's ``transport::address`` remote-helper syntax and hostless URLs are
refused with a :class:`CheckoutError`.
"""

from __future__ import annotations

import hashlib
import os
import re
from urllib.parse import urlsplit, urlunsplit

from semgraph.errors import CheckoutError

_SCP_LIKE = re.compile(r"^(?P<user>[A-Za-z0-9._-]+@)?(?P<host>[A-Za-z0-9.-]+):(?P<path>[^/].*)$")


def normalize_source(source: str) -> str:
    """A canonical URL for ``source``: local paths become absolute ``file://`` URLs."""
    src = source.strip()
    if not src or len(src) > 4096 or any(ord(c) < 32 for c in src):
        raise CheckoutError(f"invalid repository source {source[:200]!r}")
    if src.startswith("-"):
        raise CheckoutError(f"invalid repository source {source[:200]!r} (starts with '-')")
    parts = urlsplit(src)
    if parts.scheme in {"http", "https", "ssh", "git"}:
        host = (parts.hostname or "").lower()
        if not host:
            raise CheckoutError(f"repository URL has no host: {source[:200]!r}")
        netloc = host if parts.port is None else f"{host}:{parts.port}"
        if parts.username:
            netloc = f"{parts.username}@{netloc}"
        path = parts.path.rstrip("/").removesuffix(".git")
        return urlunsplit((parts.scheme, netloc, path, "", ""))
    if parts.scheme == "file":
        path = os.path.normpath(parts.path or "/").rstrip("/").removesuffix("/.git")
        return "file://" + (path or "/")
    if "::" in src or (parts.scheme and len(parts.scheme) > 1 and not _SCP_LIKE.match(src)):
        # "transport::address" is git's remote-helper syntax (ext::, fd:: ...): never allowed
        raise CheckoutError(f"unsupported repository URL scheme in {source[:200]!r}")
    scp = _SCP_LIKE.match(src)
    if scp and not os.path.exists(src):
        user = scp.group("user") or ""
        return (
            f"ssh://{user}{scp.group('host').lower()}/{scp.group('path').rstrip('/')}".removesuffix(
                ".git"
            )
        )
    path = os.path.normpath(os.path.abspath(os.path.expanduser(src)))
    return "file://" + path.removesuffix("/.git")


def repo_key_for(source: str) -> str:
    """A stable key for a repository: ``<name>-<10 hex of sha256(normalised URL)>``,
    lowercase ``[a-z0-9_-]``, starting with a letter or digit (safe for paths and ES
    index names)."""
    url = normalize_source(source)
    last = url.rstrip("/").rsplit("/", 1)[-1].lower()
    name = re.sub(r"[^a-z0-9_-]+", "-", last).strip("-_")[:40] or "repo"
    if not name[0].isalnum():
        name = "repo-" + name
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:10]
    return f"{name}-{digest}"
