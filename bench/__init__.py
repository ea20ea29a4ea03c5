"""satchel's benchmarks: run with ``python -m bench.<name>``; never part of the test suite."""
