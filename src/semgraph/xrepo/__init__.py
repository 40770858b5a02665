"""Cross-repository links: package identity (``packages``), the link of a dependent's
external call sites to its providers' definitions (``link``, with a lookup per ecosystem),
its counts and the re-link of a library's dependents (``relink``). A layer below the graph
store: its publish calls the link inside its own transaction."""
