"""Kafka clients over the simulated network: Producer and Consumer."""
