"""Settings: Kafka's configs, version profiles, metadata modes, limits, errors the façade raises,
and the Java library functions whose results Kafka exposes."""
