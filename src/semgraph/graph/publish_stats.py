"""What one publish did: its form (:class:`PublishMode`) and its counts (:class:`PublishStats`),
recorded on the index run."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class PublishMode(enum.StrEnum):
    FIRST = "first"  # no node of the repository yet: CREATE everything
    DELTA = "delta"  # write the difference against the published state (in the graph)
    FULL = "full"  # no usable state: replace the subgraph in place


@dataclass
class PublishStats:
    nodes: dict[str, int] = field(default_factory=dict)  # label -> created or overwritten
    edges: dict[str, int] = field(default_factory=dict)  # type -> created
    deleted_nodes: int = 0  # nodes the new model no longer has
    deleted_edges: int = 0  # edges deleted: all of them (full), changed groups' (delta)
    dropped_rows: int = 0  # rows whose endpoints were missing (a bug if ever non-zero)
    batches: int = 0
    tx_duration_s: float = 0.0
    mode: str = PublishMode.FIRST.value
    unchanged_nodes: int = 0  # delta: node rows equal to the published ones, not written
    unchanged_groups: int = 0  # delta: edge groups equal to the published ones
    changed_groups: int = 0  # delta: edge groups unlinked (changed or gone)
    files_changed: int = 0  # files whose rows were built (every file unless a delta)
    files_removed: int = 0  # delta: files the model no longer has
    delta_fallback: str = ""  # why a delta was abandoned for a full publish, if it was
    state_rows: int = 0  # files (and the externals) whose published state was written
    state_bytes: int = 0  # bytes of published state written (pubstate.payload_bytes)
    state_read_s: float = 0.0  # delta: reading the published state from the graph
    xrepo: dict[str, Any] = field(default_factory=dict)  # the link: LinkStats
    xrepo_s: float = 0.0  # package edges and the link, in the same transaction

    @property
    def first_publish(self) -> bool:
        return self.mode == PublishMode.FIRST

    @property
    def total_nodes(self) -> int:
        return sum(self.nodes.values())

    @property
    def total_edges(self) -> int:
        return sum(self.edges.values())

    @property
    def rows_written(self) -> int:
        """Everything the transaction changed: nodes and edges written plus deleted."""
        return self.total_nodes + self.total_edges + self.deleted_nodes + self.deleted_edges

    @property
    def throughput(self) -> float:
        """Nodes plus edges written per second of transaction."""
        total = self.total_nodes + self.total_edges
        return total / self.tx_duration_s if self.tx_duration_s > 0 else 0.0

    def as_run_fields(self) -> dict[str, Any]:
        """Flat fields for :meth:`semgraph.graph.runs.RunStore.update`."""
        return {
            "graph_nodes": self.total_nodes,
            "graph_edges": self.total_edges,
            "graph_nodes_by_label": dict(self.nodes),
            "graph_edges_by_type": dict(self.edges),
            "graph_deleted_nodes": self.deleted_nodes,
            "graph_deleted_edges": self.deleted_edges,
            "graph_dropped_rows": self.dropped_rows,
            "graph_tx_rows": self.rows_written,
            "graph_tx_batches": self.batches,
            "graph_tx_duration_s": round(self.tx_duration_s, 4),
            "graph_first_publish": self.first_publish,
            "graph_mode": self.mode,
            "graph_unchanged_nodes": self.unchanged_nodes,
            "graph_unchanged_groups": self.unchanged_groups,
            "graph_delta_fallback": self.delta_fallback,
            "graph_files_changed": self.files_changed,
            "graph_files_removed": self.files_removed,
            "graph_state_rows": self.state_rows,
            "graph_state_bytes": self.state_bytes,
            "graph_state_read_s": round(self.state_read_s, 4),
        }
