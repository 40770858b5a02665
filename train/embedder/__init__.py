"""The code-search embedder's training data: registry packages turned into query/code pairs."""
