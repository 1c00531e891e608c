"""Scenario files: the format, its schema, the built-in scenarios (``*.toml`` here) and the report
schema."""
