"""kafkasim: a deterministic simulator of Apache Kafka's replication protocol, for teaching."""

__version__ = "0.1.0"
