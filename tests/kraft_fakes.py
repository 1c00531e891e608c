"""A small stand-in for ClusterControlManager with exactly the interface
ReplicationControlManager uses (is_unfenced, is_active, broker_registrations, usable_brokers,
place_replicas), driven by the same broker records the real one replays. Broker epochs follow
ReplicationControlManagerTest.defaultBrokerEpoch: 100 + broker id."""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from kafkasim.control.kraft.records import (
    BrokerRegistration,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)


def default_broker_epoch(broker_id: int) -> int:
    return 100 + broker_id


class UsableBroker(NamedTuple):
    id: int
    rack: str | None
    fenced: bool


class FakeClusterControl:
    def __init__(self) -> None:
        self.broker_registrations: dict[int, BrokerRegistration] = {}
        # BrokerHeartbeatManager's shuttingDown state (controlled shutdown offset set), which
        # is what removes a broker from usableBrokers -- not the registration's flag
        self.shutting_down: set[int] = set()

    def replay(self, record, offset: int = 0) -> None:
        regs = self.broker_registrations
        if isinstance(record, RegisterBrokerRecord):
            regs[record.broker_id] = BrokerRegistration(
                record.broker_id, record.broker_epoch, record.incarnation_id, record.rack,
                fenced=record.fenced, in_controlled_shutdown=record.in_controlled_shutdown)
        elif isinstance(record, UnregisterBrokerRecord):
            regs.pop(record.broker_id, None)
        elif isinstance(record, FenceBrokerRecord):
            regs[record.id] = replace(regs[record.id], fenced=True)
        elif isinstance(record, UnfenceBrokerRecord):
            regs[record.id] = replace(regs[record.id], fenced=False)
        elif isinstance(record, BrokerRegistrationChangeRecord):
            reg = regs[record.broker_id]
            if record.fenced == BrokerRegistrationFencingChange.FENCE:
                reg = replace(reg, fenced=True)
            elif record.fenced == BrokerRegistrationFencingChange.UNFENCE:
                reg = replace(reg, fenced=False)
            if record.in_controlled_shutdown == \
                    BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN:
                reg = replace(reg, in_controlled_shutdown=True)
            regs[record.broker_id] = reg

    def register_record(self, broker_id: int, epoch: int | None = None) -> RegisterBrokerRecord:
        return RegisterBrokerRecord(broker_id, default_broker_epoch(broker_id)
                                    if epoch is None else epoch, f"incarnation-{broker_id}")

    # -- the interface ReplicationControlManager uses --------------------------------------
    def is_unfenced(self, broker_id: int) -> bool:
        reg = self.broker_registrations.get(broker_id)
        return reg is not None and not reg.fenced

    def is_active(self, broker_id: int) -> bool:
        reg = self.broker_registrations.get(broker_id)
        return reg is not None and not reg.fenced and not reg.in_controlled_shutdown

    #: the placer refusals' wording: 4.2's (StripedReplicaPlacer before KIP-1066)
    cordoned_dirs_in_messages = False

    def usable_brokers(self) -> list[UsableBroker]:
        return [UsableBroker(r.id, r.rack, r.fenced)
                for _, r in sorted(self.broker_registrations.items())
                if r.id not in self.shutting_down]

    def place_replicas(self, start_partition: int, num_partitions: int,
                       num_replicas: int) -> list[list[int]]:
        """Not StripedReplicaPlacer: unfenced brokers first, rotated per partition."""
        usable = self.usable_brokers()
        order = [b.id for b in usable if not b.fenced] + [b.id for b in usable if b.fenced]
        out = []
        for p in range(start_partition, start_partition + num_partitions):
            k = p % len(order)
            rotated = order[k:] + order[:k]
            out.append(rotated[:num_replicas])
        return out
