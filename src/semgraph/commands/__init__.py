"""The command line's subcommands (typer), one module per group, and :mod:`.console`, what
they share. :mod:`semgraph.cli` assembles them; nothing below imports this package."""
