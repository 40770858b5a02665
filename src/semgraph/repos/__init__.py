"""The repository lifecycle: what is known of a repository, how it is listed and shown, and
its removal.

* :mod:`semgraph.repos.listing`: every repository the graph knows (published, being
  removed, or only recorded at its first enqueue) and everything about one
  (``semgraph repos list|show``, ``GET /repos/{key}``); the rule for a repository key.
* :mod:`semgraph.repos.removal`: the ``remove`` job kind's steps and how a removal is
  requested (``semgraph repos remove``, ``DELETE /repos/{key}``, a host's webhook).
* :mod:`semgraph.repos.graph`: the graph statements of a removal and the reads of
  ``:Repository`` nodes with their state.

The record itself (``:RepoRecord``, written by the enqueue batch in its own transaction) is
the queue's: :mod:`semgraph.queue.records` holds its rule and its reads. The web routes
(:mod:`semgraph.web.repos_api`) and the commands (:mod:`semgraph.commands.repos`) are thin
adapters over this package; the job function that runs a removal is registered with the
other job kinds in :mod:`semgraph.jobs`; every host's sweep of removed repositories' caches
is a maintenance pass (:mod:`semgraph.maintenance.hostcaches`).
"""
