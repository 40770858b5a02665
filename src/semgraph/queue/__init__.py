"""Durable job queue stored in the graph database (``:JobQueue`` nodes).

``semgraph.queue.store.JobStore`` runs every queue query (all in ``semgraph.queue.queries``);
``semgraph.queue.worker`` runs jobs registered in ``semgraph.queue.registry``;
``semgraph.queue.sweep`` recovers jobs of dead workers.
"""

from semgraph.errors import InvalidTransition, JobCancelled, JobNotFound
from semgraph.queue.models import EnqueueResult, Job, JobStatus

__all__ = ["EnqueueResult", "InvalidTransition", "Job", "JobCancelled", "JobNotFound", "JobStatus"]
