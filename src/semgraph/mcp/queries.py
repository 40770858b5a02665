"""The graph and search statements of the MCP tools that the graph reader and the search
module do not have, as named constants (parameters always bound)."""

from __future__ import annotations

from typing import Any

# every call: one repository's published record, its published run and its newest jobs, in
# one round trip (the freshness block and the run id a cursor is tied to)
REPO_STATE = """
OPTIONAL MATCH (j:JobQueue {repo_key: $repo})
WITH j ORDER BY j.created_at DESC, j.id DESC LIMIT $jobs
WITH collect(properties(j)) AS jobs
OPTIONAL MATCH (r:Repository {key: $repo})
OPTIONAL MATCH (x:IndexRun {id: r.run_id})
RETURN jobs, properties(r) AS repo, properties(x) AS run
"""

# get_snippet: the file at the published run (its blob and language)
FILE_AT_RUN = """
MATCH (f:File {key: $key})
RETURN f.path AS path, f.blob_sha AS blob_sha, f.language AS language
"""

#: chunks read for one snippet (a 400-line window is a few dozen chunks)
SNIPPET_MAX_CHUNKS = 2000


def snippet_chunks_body(path: str, start: int, end: int) -> dict[str, Any]:
    """The chunks of ``path`` that overlap lines ``start..end``, in line order."""
    return {
        "query": {
            "bool": {
                "filter": [
                    {"term": {"path": path}},
                    {"range": {"start_line": {"lte": end}}},
                    {"range": {"end_line": {"gte": start}}},
                ]
            }
        },
        "_source": ["start_line", "end_line", "code"],
        "sort": [{"start_line": "asc"}, {"end_line": "asc"}],
        "size": SNIPPET_MAX_CHUNKS,
        # the file's last non-blank line, whatever the window: does the file go on?
        "aggs": {
            "all": {
                "global": {},
                "aggs": {
                    "file": {
                        "filter": {"term": {"path": path}},
                        "aggs": {"last": {"max": {"field": "end_line"}}},
                    }
                },
            }
        },
    }
