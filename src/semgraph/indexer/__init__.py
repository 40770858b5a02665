"""Checkout, file walk, tree-sitter parsing in a per-job pool, spill to disk."""
