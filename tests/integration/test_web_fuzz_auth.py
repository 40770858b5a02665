"""The OpenAPI schema fuzzed with and without tokens (issue 18): schemathesis generates
requests for every operation (valid and invalid); with a token configured, a request
without one, with a wrong one or with a token of another scope never gets a 200 from a read
endpoint and never a 500; with the right token, no 500 either. Bounded: a few examples per
operation, derandomized."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from elasticsearch import Elasticsearch
from schemathesis import GenerationMode

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.web.app import create_app
from semgraph.web.fixtures import serve_in_thread

pytestmark = pytest.mark.integration

ADMIN, ENQUEUE = "fuzz-admin-token-0123456789", "fuzz-enqueue-token-0123456789"
TOKENS = f"""
[[tokens]]
name = "admin"
token = "{ADMIN}"
scopes = ["read", "enqueue", "admin"]

[[tokens]]
name = "ci"
token = "{ENQUEUE}"
scopes = ["enqueue"]

[[tokens]]
name = "limited"
token = "fuzz-limited-token-0123456789"
scopes = ["read"]
repos = ["only-this-one"]
"""
OPEN_PATHS = {"/healthz", "/readyz"}  # /metrics needs a token too (metrics scope)
CALLERS = {
    "anonymous": {},
    "wrong": {"Authorization": "Bearer not-a-configured-token-at-all"},
    "malformed": {"Authorization": "Basic Zm9vOmJhcg=="},
    "enqueue-only": {"Authorization": f"Bearer {ENQUEUE}"},
    "limited": {"Authorization": "Bearer fuzz-limited-token-0123456789"},
    "admin": {"Authorization": f"Bearer {ADMIN}"},
}


@pytest.fixture
def served_schema(
    graph: Graph, es: Elasticsearch, settings: Settings, tmp_path: Path
) -> Iterator[Any]:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    configured = settings.model_copy(
        update={"api_tokens_file": tokens, "webhook_secret": "fuzz-secret"}
    )
    with serve_in_thread(create_app(configured, graph=graph, search=es)) as url:
        # the API description is a read: the admin token fetches it
        yield schemathesis.openapi.from_url(f"{url}/openapi.json", headers=CALLERS["admin"])


def is_read(method: str, path: str) -> bool:
    return method == "GET" and path not in OPEN_PATHS and not path.startswith("/openapi")


@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_no_500_and_no_read_without_the_read_scope(served_schema: Any, caller: str) -> None:
    headers = CALLERS[caller]
    may_read = caller in {"admin", "limited"}
    operations = [result.ok() for result in served_schema.get_all_operations()]
    seen: dict[str, set[int]] = {}
    for operation in operations:
        negatable = (
            list(operation.iter_parameters()) or operation.get_request_payload_content_types()
        )
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            if mode is GenerationMode.NEGATIVE and not negatable:
                continue  # nothing to make invalid (GET /healthz, /readyz, /metrics)

            @hypothesis.settings(
                max_examples=4,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(hypothesis.HealthCheck),
            )
            @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
            def check(case: Any) -> None:
                op = case.operation
                if case.headers:
                    case.headers.pop("Authorization", None)
                response = case.call(headers=headers, timeout=60)
                status = response.status_code
                seen.setdefault(op.label, set()).add(status)
                assert status < 500 or status == 503, (op.label, status, response.text)
                if is_read(op.method.upper(), op.path) and not may_read:
                    assert status in {401, 403, 404, 422}, (op.label, status)
                    assert status != 200

            check()
    assert "GET /search" in seen and "POST /jobs" in seen
    if not may_read:
        assert all(
            200 not in statuses for label, statuses in seen.items() if is_read(*label.split(" ", 1))
        ), seen
