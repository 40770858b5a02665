"""Localisation: from an issue text to the files, and the symbols within them, to change.

It answers over the layers below it: the hybrid chunk search (:mod:`semgraph.search`) and
the code graph (its own statements in :mod:`semgraph.localize.queries`, the call-graph hops
of :mod:`semgraph.graph.queries`). :func:`semgraph.localize.locate.localize` is the entry
point; :mod:`semgraph.localize.mentions` reads the text, :mod:`semgraph.localize.rank`
scores the evidence.
"""
