"""Observation: invariant checkers, history, snapshots, describe, metrics."""
