"""The code graph store: its schema and dialect (Memgraph / Neo4j), the publish of one
repository (its rows, the delta against the published state, the one transaction), the reader
and the runs. The cross-repository link and package identity live in :mod:`semgraph.xrepo`, a
layer below: the publish calls them inside its transaction."""
