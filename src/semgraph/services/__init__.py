"""The local service stack: Elasticsearch (integ-test-zip) and an embedded Neo4j 5 Bolt
server, both resolved from Maven Central and run as child processes under the state
directory. ``semgraph services up|down|status`` and ``ops/stack`` drive it."""

from semgraph.services.service import ServiceState
from semgraph.services.stack import Stack

__all__ = ["ServiceState", "Stack"]
