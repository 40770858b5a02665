"""Benchmarks of the fleet: queue throughput, lanes against head-of-line blocking, a backlog
of first indexes over real workers, and a cold host against a warm one."""
