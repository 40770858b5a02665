"""Benchmarks of a first index: parse, resolve, embed, publish, peak memory, the whole job
end to end, a fork's reuse, a newcomer's quickstart, and the peers side by side."""
