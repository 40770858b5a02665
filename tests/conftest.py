"""Test session: a real local stack (Elasticsearch + Bolt graph server) on test ports.

The stack is started once per session (idempotent: a stack left running by an earlier
session is reused) under its own state directory, so tests never touch a developer's data.
Integration and e2e tests use the ``graph`` / ``es`` fixtures; unit tests need nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # the fixtures import semgraph when first used, not at collection
    from elasticsearch import Elasticsearch

    from semgraph.config import Settings
    from semgraph.db import Graph
    from semgraph.services import Stack

TEST_ENV = {
    "SEMGRAPH_STATE_DIR": f"/var/tmp/semgraph-test-{os.getuid()}",
    "SEMGRAPH_BOLT_URI": "bolt://127.0.0.1:17687",
    "SEMGRAPH_ES_URL": "http://127.0.0.1:19200",
    # the test stack holds small graphs; a heap sized from the machine would take ~10 GiB here
    "SEMGRAPH_NEO4J_HEAP_MB": "1536",
    # one export of the embedding model (minutes of CPU) for every state directory the tests
    # make, their own subprocesses included; the cache verifies and locks its entries
    "SEMGRAPH_MODELS_DIR": f"/var/tmp/semgraph-models-{os.getuid()}",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}
for _key, _value in TEST_ENV.items():
    os.environ.setdefault(_key, _value)

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def settings() -> Settings:
    from semgraph.config import load_settings

    return load_settings()


@pytest.fixture(scope="session")
def stack(settings: Settings) -> Iterator[Stack]:
    from semgraph.services import Stack

    stack = Stack(settings)
    stack.up()
    yield stack
    if os.environ.get("CI") == "true" and os.environ.get("SEMGRAPH_TEST_KEEP_STACK") != "1":
        stack.down()


@pytest.fixture(scope="session")
def graph_session(stack: Stack, settings: Settings) -> Iterator[Graph]:
    from semgraph.db import connect_graph
    from semgraph.graph.schema import SCHEMA

    graph = connect_graph(settings)
    graph.ensure_schema(SCHEMA)
    yield graph
    graph.close()


@pytest.fixture
def graph(graph_session: Graph) -> Graph:
    """The real Bolt server, emptied before the test (schema kept)."""
    graph_session.query("test reset", "MATCH (n) DETACH DELETE n")
    return graph_session


@pytest.fixture(scope="session")
def es_session(stack: Stack, settings: Settings) -> Iterator[Elasticsearch]:
    from semgraph.db import connect_search

    client = connect_search(settings)
    yield client
    client.close()


@pytest.fixture
def es(es_session: Elasticsearch) -> Elasticsearch:
    """The real Elasticsearch node, with every non-system index and alias removed first."""
    indices = es_session.indices.get(index="*", expand_wildcards="open,closed")
    names = [n for n in indices if not n.startswith(".")]
    if names:
        es_session.indices.delete(index=",".join(names), ignore_unavailable=True)
    return es_session
