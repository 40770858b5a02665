"""Durable job queue stored in the graph database (``:JobQueue`` nodes)."""
