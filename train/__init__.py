"""Scripts that build and train semgraph's models; not shipped in the package."""
