"""Benchmarks (print ratios against a baseline measured in the same run) and the synthetic
repository generator the parse, graph and search benchmarks share."""
