"""Benchmarks: each prints ratios against a baseline measured in the same run.

By what they measure: ``push`` (a push and its publish), ``firstindex`` (a whole first index:
parse, resolve, embed, memory, peers), ``fleet`` (the queue and many workers), ``search``
(retrieval and localisation quality and latency), ``accuracy`` (call edges against
compiler-grade oracles, within and across repositories), ``interfaces`` (CLI, console and MCP
answers). ``synth`` generates the synthetic repositories they share; ``harness`` runs them and
renders ``bench/RESULTS.md`` (``python -m bench.run_all``).
"""
