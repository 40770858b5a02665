"""The worker's maintenance passes, one module each, run by every worker at start and at
every periodic rescue (:func:`semgraph.queue.registry.on_maintenance`; the job kinds
register them in :mod:`semgraph.jobs`).
"""
