"""The test process's job kinds (:class:`semgraph.jobs.JobKinds`): every test shares their
embedding model (loaded once) and Elasticsearch client, as the jobs of a worker process do;
a test that runs a worker in-process registers these (``register_job_kinds(KINDS)``)."""

from __future__ import annotations

from semgraph.jobs import JobKinds

KINDS = JobKinds()
shared_embedder = KINDS.embedder
shared_search = KINDS.search
