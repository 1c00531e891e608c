"""kafkasim benchmarks: `make bench` runs every benchmarks/bench_*.py through benchmarks.run."""
