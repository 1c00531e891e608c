"""Observation: the invariant checkers, history (time travel over recorded snapshots), snapshots."""
