"""``python -m semgraph.services up|down|status`` (what ``ops/stack`` runs)."""

from semgraph.cli import services_main

services_main()
