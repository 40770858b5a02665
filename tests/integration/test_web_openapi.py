"""The served OpenAPI document is accurate: schemathesis generates requests from it (valid
and invalid) and checks every answer's status, content type and body against it."""

from __future__ import annotations

from collections.abc import Iterator
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

TOKEN = "schemathesis-token"


@pytest.fixture
def served_schema(graph: Graph, es: Elasticsearch, settings: Settings) -> Iterator[Any]:
    configured = settings.model_copy(
        update={"api_token": TOKEN, "webhook_secret": "schemathesis-secret"}
    )
    with serve_in_thread(create_app(configured, graph=graph, search=es)) as url:
        # the API description is a read: with a token configured, the token fetches it
        yield schemathesis.openapi.from_url(
            f"{url}/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}
        )


# schemathesis' own pytest plugin does not run under pytest 9 yet, so each operation's
# strategy is driven by Hypothesis directly (positive and negative generation modes)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_api_matches_its_openapi_document(served_schema: Any, mode: GenerationMode) -> None:
    operations = [result.ok() for result in served_schema.get_all_operations()]
    labels = {op.label for op in operations}
    assert {"POST /webhooks/github", "GET /jobs", "POST /jobs", "GET /search"} <= labels
    for operation in operations:
        negatable = (
            list(operation.iter_parameters()) or operation.get_request_payload_content_types()
        )
        if mode is GenerationMode.NEGATIVE and not negatable:
            continue  # nothing to make invalid (GET /healthz, /readyz, /metrics)

        @hypothesis.settings(
            max_examples=8,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )
        @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
        def check(case: Any) -> None:
            case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)

        check()
