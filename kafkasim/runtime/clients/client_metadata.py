"""What Kafka's client ``Metadata`` class does for both clients (the producer's
``ProducerMetadata`` and the consumer's ``ConsumerMetadata`` extend it): the leader-epoch test
of ``Metadata.updateLatestMetadata`` (KAFKA-7738, 2.2+).

The client keeps the newest leader epoch it saw per partition (``lastSeenLeaderEpochs``). A
MetadataResponse row with a newer epoch (or the first one) is taken and makes the answer news; a
row without an epoch forgets the partition's; with the rule, a row whose epoch is older than
the last seen one is stale -- a broker whose metadata cache lags answered -- and the cached
leader stays.
"""

from __future__ import annotations

#: the verdicts of ``update_latest_metadata``
NEW, SAME, STALE = "new", "same", "stale"


def update_latest_metadata(last_seen: dict, tp: tuple[str, int], epoch: int,
                           keep_newer_epoch: bool) -> str:
    """Metadata.updateLatestMetadata's leader-epoch test for the row of ``tp`` (``epoch`` -1:
    none), updating ``last_seen``: NEW (no epoch, the first or a newer one: the row is taken
    and counts as news), STALE (older than the last seen, with ``keep_newer_epoch``: the rule
    ``producer_metadata_keeps_newer_leader_epoch``, 2.2+), SAME (taken, nothing new)."""
    last = last_seen.get(tp)
    if epoch < 0:
        last_seen.pop(tp, None)
        return NEW
    if last is None or epoch > last:
        last_seen[tp] = epoch
        return NEW
    if keep_newer_epoch and epoch < last:
        return STALE
    return SAME
