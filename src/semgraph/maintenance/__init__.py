"""The worker's maintenance passes, one module each, run by every worker at start and at
every periodic rescue (:func:`semgraph.queue.registry.on_maintenance`; the job kinds
register them in :mod:`semgraph.jobs`, in this order):

* :mod:`semgraph.maintenance.search`: repair divergence, delete orphaned staging indexes;
* :mod:`semgraph.maintenance.leftovers`: close the runs of attempts that ended, delete
  their left-over workdirs;
* :mod:`semgraph.maintenance.hostcaches`: delete this host's caches of repositories the
  graph no longer knows;
* :mod:`semgraph.maintenance.cleanup`: delete orphan packages and runs past the retention;
  every pass counts what it removed (``semgraph_cleanup_removed_total{what}``).

Each has its test beside it in ``tests/integration/test_maintenance_<module>.py``. A pass
that raises is logged; it never stops the worker.
"""
