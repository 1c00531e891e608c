"""Trace reading shared by the drawings: when each broker was stopped or paused."""

from __future__ import annotations

from typing import NamedTuple

from kafkasim.core.events import Pause

STOP_KINDS = ("broker_crash", "broker_power_loss", "broker_shutdown")


class BrokerStatus(NamedTuple):
    """A span of simulated time [start_ms, end_ms) in which ``broker`` was not serving."""

    broker: int
    start_ms: int
    end_ms: int
    status: str      # "stopped" (crash, power loss, clean shutdown) or "paused" (GC pause)


def broker_status_intervals(cluster, end_ms: int | None = None) -> list[BrokerStatus]:
    """Stopped and paused spans of every broker, from the trace (crash/start rows, pause faults).

    A span still open at ``end_ms`` (default: now) ends there."""
    end = cluster.now if end_ms is None else end_ms
    down: dict[int, int] = {}            # broker -> stopped since
    paused: dict[int, list[int]] = {}    # broker -> [since, until]
    out: list[BrokerStatus] = []
    brokers = cluster.brokers
    for t, kind, node, _topic, _p, detail in cluster.trace.rows:
        if t > end:
            break
        if node not in brokers or isinstance(node, bool):
            continue
        if kind in STOP_KINDS:
            if node in paused:
                since, until = paused.pop(node)
                if min(until, t) > since:
                    out.append(BrokerStatus(node, since, min(until, t), "paused"))
            down.setdefault(node, t)
        elif kind == "broker_start":
            since = down.pop(node, None)
            if since is not None:
                out.append(BrokerStatus(node, since, t, "stopped"))
        elif kind == "fault" and isinstance(detail, Pause):
            if node not in down:
                until = t + detail.ms
                span = paused.get(node)
                if span is not None and span[1] >= t:
                    span[1] = max(span[1], until)      # Cluster.pause extends, never shortens
                else:
                    if span is not None:
                        out.append(BrokerStatus(node, span[0], span[1], "paused"))
                    paused[node] = [t, until]
    for node, since in down.items():
        out.append(BrokerStatus(node, since, end, "stopped"))
    for node, (since, until) in paused.items():
        out.append(BrokerStatus(node, since, min(until, end), "paused"))
    out.sort(key=lambda s: (s.broker, s.start_ms))
    return out
