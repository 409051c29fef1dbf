"""The benchmarks behind `make bench` (`python -m tools.bench`, see __main__): one module a
section, and `core` for the rows, options, progress and tables they share."""
