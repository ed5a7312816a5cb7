"""Benchmarks: run as ``python -m bench.search``, ``bench.walls``, ``bench.ingest``.

They live apart from the tests: they print ratios against a baseline measured in the same
process and never assert on timings (see bench/README.md).
"""
