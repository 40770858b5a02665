"""The search index: embeddings, staging index and alias, hybrid query."""
