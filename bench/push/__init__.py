"""Benchmarks of a push: the delta publish, the job's phases, incremental resolution, the
cross-repository re-link, real-history replay and push-to-searchable through the webhook."""
