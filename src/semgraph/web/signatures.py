"""Webhook authenticity checks for the three git hosts, all in constant time.

* GitHub: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>``;
* Gitea (and Forgejo): ``X-Gitea-Signature: <hex HMAC-SHA256 of the raw body>``;
* GitLab: ``X-Gitlab-Token: <the secret itself>`` (no signature; compared in constant time).

Each check returns a bool and never raises on hostile header values: a wrong length, a
non-hex digest or non-ASCII text is simply "not authentic".
"""

from __future__ import annotations

import hashlib
import hmac

_HEX = frozenset("0123456789abcdef")
_SHA256_HEX_LEN = 64


def hmac_sha256_hex(body: bytes, secret: str) -> str:
    """The lowercase hex HMAC-SHA256 of ``body`` keyed with ``secret`` (UTF-8)."""
    return hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def sign_github(body: bytes, secret: str) -> str:
    """The ``X-Hub-Signature-256`` value GitHub sends for ``body``."""
    return "sha256=" + hmac_sha256_hex(body, secret)


def sign_gitea(body: bytes, secret: str) -> str:
    """The ``X-Gitea-Signature`` value Gitea sends for ``body``."""
    return hmac_sha256_hex(body, secret)


def _digest_matches(expected_hex: str, given: str) -> bool:
    given = given.strip().lower()
    if len(given) != _SHA256_HEX_LEN or not set(given) <= _HEX:
        # still spend one comparison so malformed headers cost about the same time
        hmac.compare_digest(expected_hex, expected_hex)
        return False
    return hmac.compare_digest(expected_hex, given)


def verify_github(body: bytes, header: str | None, secret: str) -> bool:
    """Whether ``header`` is GitHub's ``sha256=`` signature of ``body`` under ``secret``."""
    if not header or not secret:
        return False
    scheme, _, digest = header.strip().partition("=")
    if scheme.lower() != "sha256":
        return False
    return _digest_matches(hmac_sha256_hex(body, secret), digest)


def verify_gitea(body: bytes, header: str | None, secret: str) -> bool:
    """Whether ``header`` is Gitea's hex signature of ``body`` under ``secret``."""
    if not header or not secret:
        return False
    digest = header.strip()
    if digest.lower().startswith("sha256="):  # Forgejo proxies sometimes add the prefix
        digest = digest[len("sha256=") :]
    return _digest_matches(hmac_sha256_hex(body, secret), digest)


def verify_gitlab(header: str | None, secret: str) -> bool:
    """Whether GitLab's ``X-Gitlab-Token`` equals ``secret`` (constant time)."""
    if header is None or not secret:
        return False
    given = header.encode("utf-8", "surrogateescape")
    # compare digests so the comparison time does not depend on the secret's length either
    return hmac.compare_digest(
        hashlib.sha256(given).digest(), hashlib.sha256(secret.encode("utf-8")).digest()
    )
