"""Tools that are not the simulator: the ``kafkasim`` command, the input fuzzer, the Spark cluster
launcher."""
