from __future__ import annotations

from semgraph.errors import GraphUnavailable, JobError, SemgraphError, cause_chain


def test_docstring_is_default_message() -> None:
    assert str(GraphUnavailable()) == "The graph server is unreachable."
    assert isinstance(GraphUnavailable(), SemgraphError)


def test_cause_chain_outermost_first() -> None:
    try:
        try:
            raise OSError("connection refused")
        except OSError as exc:
            raise JobError("checkout failed") from exc
    except JobError as exc:
        chain = cause_chain(exc)
    assert chain == ["JobError: checkout failed", "OSError: connection refused"]
