"""The harness of ``python -m bench.run_all``: what runs (``benches``), a run and its log
(``runner``), kept logs read back (``logs``), the JSON lines the benchmarks print
(``records``), their rows (``figures``) and the report (``render``)."""
