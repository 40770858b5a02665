"""Retrieval and localisation: quality evaluations (own and outside corpora, commit messages
to changed code, long queries) and search and ``localize`` latency."""
