from __future__ import annotations

import hashlib
import hmac

from hypothesis import given, settings
from hypothesis import strategies as st

from semgraph.web.signatures import (
    sign_gitea,
    sign_github,
    verify_gitea,
    verify_github,
    verify_gitlab,
)

SECRET = "s3cret-value"


def test_github_signature_matches_the_documented_example() -> None:
    # GitHub's docs: secret "It's a Secret to Everybody", payload "Hello, World!"
    body = b"Hello, World!"
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign_github(body, "It's a Secret to Everybody") == expected
    assert verify_github(body, expected, "It's a Secret to Everybody")
    assert verify_github(
        body, expected.upper().replace("SHA256", "sha256"), "It's a Secret to Everybody"
    )


def test_gitea_signature_is_bare_hex() -> None:
    body = b'{"ref":"refs/heads/main"}'
    sig = sign_gitea(body, SECRET)
    assert sig == hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert verify_gitea(body, sig, SECRET)
    assert not verify_gitea(body + b" ", sig, SECRET)
    assert not verify_gitea(body, sig, SECRET + "x")


def test_malformed_headers_are_rejected_without_raising() -> None:
    body = b"{}"
    good = sign_github(body, SECRET)
    for header in (
        None,
        "",
        "sha256=",
        "sha1=" + good[7:],
        good[:-1],
        good + "0",
        "sha256=" + "g" * 64,
        "sha256=" + "é" * 64,
        "\x00" * 71,
        good.replace("sha256=", ""),
    ):
        assert not verify_github(body, header, SECRET), header
    assert not verify_github(body, good, "")
    assert not verify_gitea(body, None, SECRET)
    assert not verify_gitea(body, "zz", SECRET)


def test_gitlab_token_is_an_exact_match() -> None:
    assert verify_gitlab(SECRET, SECRET)
    for header in (None, "", SECRET + " ", SECRET[:-1], SECRET.upper(), "\udcff"):
        assert not verify_gitlab(header, SECRET), header
    assert not verify_gitlab("", "")


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=2048), header=st.text(max_size=100), secret=st.text(min_size=1))
def test_random_signatures_never_verify(body: bytes, header: str, secret: str) -> None:
    assert verify_github(body, header, secret) == (
        header.strip().lower() == sign_github(body, secret)
    )
    assert not verify_gitea(body, header, SECRET) or header.strip().lower().removeprefix(
        "sha256="
    ) == sign_gitea(body, SECRET)


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=1024), other=st.text(min_size=1, max_size=40))
def test_signature_under_another_secret_never_verifies(body: bytes, other: str) -> None:
    if other == SECRET:
        return
    assert not verify_github(body, sign_github(body, other), SECRET)
    assert not verify_gitea(body, sign_gitea(body, other), SECRET)
    assert not verify_gitlab(other, SECRET)
