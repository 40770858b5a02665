"""Call and import resolution: from the parsed model (:mod:`semgraph.model`) to the
resolution the graph writer publishes (:mod:`semgraph.resolve.resolution`). Pure analysis:
it reads the parsed facts through an on-disk symbol table and knows no store.

``resolver``        the driver: symbol table, imports, bases, calls, bundle digests
``resolution``      what it produces, kept in the symbol table's SQLite file
``symtab``/``scope`` the symbol table and what a name means from one file
``tiers``           the call tiers (scope, import, module, receiver, unique, interface)
``typed``/``typeexpr``/``python_types``/``go_types``  receiver types
``go_reach``        the Go types that reach an external interface (``http.Handler``)
``imports``/``import_handlers``/``import_types``/``pyroots``/``builtins``  imports
``incremental``/``surface``/``patch``/``ledger``  only what a change can affect, equal to full
``compare``         whether two resolutions are the same, table by table
"""
