"""semgraph: a fresh code graph and semantic code-search index for many git repositories."""

from __future__ import annotations

__version__ = "0.1.0"
