"""The one place semgraph errors become HTTP answers: the app's error handlers and their
table (routes raise, the handlers answer ``{"detail": ...}``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from semgraph.config import load_settings
from semgraph.errors import (
    CheckoutError,
    ConfigError,
    GraphConflict,
    GraphInputError,
    GraphQueryError,
    GraphUnavailable,
    InvalidTransition,
    JobNotFound,
    PayloadError,
    RunNotFound,
    RunStateError,
    SearchNotIndexed,
    SearchQueryError,
    SearchRequestError,
    SearchUnavailable,
    SemgraphError,
)
from semgraph.web.app import create_app

LONG = "x" * 400
UNAVAILABLE = {"detail": "a data store is unavailable; retry"}
REJECTED = {"detail": "a data store rejected the request"}


@pytest.fixture(scope="module")
def http() -> Iterator[TestClient]:
    """The app with one extra route that raises the error it is told to (no store is used)."""
    app = create_app(load_settings(), repo_key_for=str)
    raised: dict[str, SemgraphError] = {}

    def boom(name: str) -> None:
        raise raised[name]

    app.add_api_route("/boom/{name}", boom)
    app.state.raised = raised
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def answer(http: TestClient, exc: SemgraphError) -> tuple[int, object, str | None]:
    http.app.state.raised["e"] = exc  # type: ignore[attr-defined]
    resp = http.get("/boom/e")
    body = resp.json() if resp.headers.get("content-type") == "application/json" else resp.text
    return resp.status_code, body, resp.headers.get("retry-after")


@pytest.mark.parametrize(
    ("exc", "status", "body"),
    [
        (PayloadError("field ref must be a full ref name"), 400, None),
        (GraphInputError("depth must be between 1 and 5, got 9"), 400, None),
        (SearchQueryError("the search query is empty"), 400, None),
        (InvalidTransition("job is running"), 400, None),
        (JobNotFound("no such job"), 404, None),
        (RunNotFound("no such run"), 404, None),
        (SearchNotIndexed(f"repository {LONG!r} is not indexed"), 404, None),
        (GraphUnavailable("connection refused"), 503, UNAVAILABLE),
        (GraphConflict("deadlock"), 503, UNAVAILABLE),
        (SearchUnavailable("connection refused"), 503, UNAVAILABLE),
        (GraphQueryError("syntax error"), 502, REJECTED),
        (RunStateError("index run 'r' is already failed"), 502, REJECTED),
        (SearchRequestError("index_not_found"), 502, REJECTED),
    ],
)
def test_each_error_type_has_its_status_and_detail(
    http: TestClient, exc: SemgraphError, status: int, body: object
) -> None:
    code, got, retry_after = answer(http, exc)
    assert code == status
    assert got == (body if body is not None else {"detail": exc.message})  # never cut here
    assert (retry_after is not None) == (status == 503)


def test_refused_sources_and_fields_are_cut_to_300_characters(http: TestClient) -> None:
    for exc in (CheckoutError(LONG), InvalidTransition(LONG)):
        assert answer(http, exc)[:2] == (400, {"detail": LONG[:300]})


def test_an_error_without_an_entry_stays_a_server_error(http: TestClient) -> None:
    assert answer(http, ConfigError("not a request's fault"))[0] == 500
