"""Notebook 10 (checkpoint files and restart): the files a broker keeps in its log dir, what a
restarted broker loads from them, and the exercise checks.

Concept C16: the high watermark survives a restart only as well as the last write of
``replication-offset-checkpoint`` (ReplicaManager.checkpointHighWatermarks, every
replica.high.watermark.checkpoint.interval.ms = 5000, and at shutdown); the recovery point comes
from ``recovery-point-offset-checkpoint`` (LogManager, every log.flush.offset.checkpoint.interval.ms
= 60000), and a clean shutdown's ``.kafka_cleanshutdown`` skips recovery (LogLoader.recoverLog).
``_replay`` rebuilds the notebook's visible set-up on a fresh cluster to grade an answer.
"""

from __future__ import annotations

from kafkasim.course.checks import CheckResult, _form, _missing, _result, _want_int
from kafkasim.course.common import Text, notebook_version, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.course.narration import narrate
from kafkasim.observe.checks import attach
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.log_manager import CLEAN_SHUTDOWN_FILE

SEED = 10
TOPIC = "t"
ROOT_FILES = ("replication-offset-checkpoint", "recovery-point-offset-checkpoint",
              "log-start-offset-checkpoint")
FAULTS = ("crash", "power_loss", "shutdown")
#: each fault as a sentence of the course's language names it (English: kafkasim's action name)
_FAULT_WORDS = {"crash": N_("crash"), "power_loss": N_("power_loss"), "shutdown": N_("shutdown")}


def _fault_word(fault: str) -> str:
    return tr(_FAULT_WORDS[fault]) if fault in _FAULT_WORDS else fault

__all__ = ["FAULTS", "ROOT_FILES", "SEED", "check_allowed_loss", "check_loaded_hw",
           "check_power_loss_restart", "checkpoint_files", "loaded", "recoveries",
           "replica_table", "restart_view", "clean_shutdown_file"]


def checkpoint_files(cluster: Cluster, broker: int, topic: str = TOPIC, partition: int = 0
                     ) -> Text:
    """The broker's checkpoint files as its log dir holds them (text, '' = empty file)."""
    d = cluster.brokers[broker].log_manager.log_dir
    names = [*ROOT_FILES, f"{topic}-{partition}/leader-epoch-checkpoint"]
    empty = narrate("(empty)")
    return Text("\n".join(f"--- broker-{broker}/{n}\n{d.read(n) or empty}" for n in names))


def clean_shutdown_file(cluster: Cluster, broker: int) -> Text:
    """The broker's ``.kafka_cleanshutdown`` as its log dir holds it after a controlled shutdown:
    CleanShutdownFileHandler's JSON with the broker epoch (3.7+; KIP-966 reads it at the next
    start)."""
    text = cluster.brokers[broker].log_manager.log_dir.read(CLEAN_SHUTDOWN_FILE)
    if text is None:
        raise ValueError(f"clean_shutdown_file(broker={broker!r}): that broker's log dir holds no "
                         f"{CLEAN_SHUTDOWN_FILE}: it did not shut down cleanly, or started since")
    return Text(f"--- broker-{broker}/{CLEAN_SHUTDOWN_FILE}\n{text or narrate('(empty)')}")


def replica_table(cluster: Cluster, topic: str = TOPIC, partition: int = 0) -> Text:
    """Per replica: process state, LEO, HW and recovery point (in memory)."""
    rows = []
    for b in sorted(cluster.assignment(topic)[partition]):
        log = cluster.log(b, topic, partition)
        rows.append({"broker": b, "state": cluster.brokers[b].state, "LEO": log.log_end_offset,
                     "HW": log.high_watermark, N_("recovery point"): log.recovery_point})
    return text_table(rows)


def _epochs(entries) -> str:
    """Leader epoch cache entries as the learner reads them: ``0: 0, 1: 8``."""
    return ", ".join(f"{epoch}: {start}" for epoch, start in entries) or "-"


def recoveries(cluster: Cluster, since_ms: int = 0) -> Text:
    """The "log_recovery" trace rows (what a restarted broker loaded) since ``since_ms``."""
    rows = [{"t (ms)": r[0], "broker": r[2], "LEO": r[5].log_end_offset,
             "HW": r[5].high_watermark, N_("HW read from"): r[5].checkpoint,
             N_("leader epochs (epoch: start offset)"): _epochs(r[5].epochs)}
            for r in cluster.trace.rows if r[1] == "log_recovery" and r[0] >= since_ms]
    return text_table(rows) if rows else Text(tr("(no log recovery)"))


def loaded(cluster: Cluster, broker: int, since_ms: int = 0) -> dict[str, int]:
    """What ``broker`` loaded at its last start since ``since_ms`` (its "log_recovery" row):
    ``{"LEO": ..., "HW": ...}``."""
    rows = [r for r in cluster.trace.rows
            if r[1] == "log_recovery" and r[2] == broker and r[0] >= since_ms]
    if not rows:
        raise ValueError(f"loaded(broker={broker!r}, since_ms={since_ms!r}): that broker did not "
                         "start since then")
    return {"LEO": rows[-1][5].log_end_offset, "HW": rows[-1][5].high_watermark}


# -- the notebook's set-up, replayed to grade ----------------------------------------------------
def _setup(seed: int = SEED, kafka_version: str | None = None) -> tuple[Cluster, object]:
    """The notebook's visible set-up: 3 brokers, topic t (RF 3), 5 records, 6 s, 3 more, 0.5 s."""
    c = Cluster(3, seed=seed, kafka_version=notebook_version(kafka_version, "checkpoints setup"))
    c.create_topic(TOPIC, 1, 3)
    c.run(3000)
    p = c.producer("p", acks="all")
    for i in range(5):
        p.send(TOPIC, f"v{i}")
    c.run(6000)
    for i in range(3):
        p.send(TOPIC, f"w{i}")
    c.run(500)
    return c, p


def _replay(fault: str, wait_ms: int = 0, seed: int = SEED, kafka_version: str | None = None
            ) -> tuple[int, int]:
    """``wait_ms`` after the set-up, ``fault`` on a follower, start it again (100 ms later, or
    once stopped after a clean shutdown): the (LEO, HW) it loads (its "log_recovery" row)."""
    c, _p = _setup(seed, kafka_version)
    if wait_ms:
        c.run(wait_ms)
    f = min(b for b in (1, 2, 3) if b != c.leader(TOPIC))
    getattr(c, fault)(f)
    c.run_until(lambda c: c.brokers[f].state == "stopped", 60000)
    c.run(100)
    c.start(f)
    row = [r for r in c.trace.rows if r[1] == "log_recovery" and r[2] == f][-1]
    return row[5].log_end_offset, row[5].high_watermark


def restart_view(fault: str = "crash", *, kafka_version: str | None = None) -> Text:
    """Explorer: the set-up, then ``fault`` on a follower and a restart: what it loads."""
    leo, hw = _replay(fault, kafka_version=kafka_version)
    return Text(tr("{fault} of a follower, then start: it loads LEO {leo}, HW {hw} (its "
                   "checkpoint said HW 5; the leader's HW was 8)", fault=_fault_word(fault),
                   leo=leo, hw=hw))


def _int(answer) -> int | None:
    try:
        return int(answer)
    except (TypeError, ValueError):
        return None


def check_loaded_hw(answer=None, wait_ms: int = 6000, *, kafka_version: str | None = None
                    ) -> CheckResult:
    """Exercise: the HW the follower of the set-up loads when it crashes ``wait_ms`` after the
    last records and starts again."""
    missing = _missing(answer)
    if missing is not None:
        return missing
    if (m := _form(_want_int(answer))) is not None:
        return m
    _leo, hw = _replay("crash", wait_ms, kafka_version=kafka_version)
    given = _int(answer)
    if given == hw:
        return _result(True, tr("HW {hw}: the value of the last replication-offset-checkpoint, "
                                "not the HW the follower had in memory.", hw=hw))
    if given is not None and given < hw:
        return _result(False, tr("that HW is too old: the checkpoint is rewritten every 5000 "
                                 "ms; was it rewritten between the last records and the crash?"))
    return _result(False, tr("read the broker's replication-offset-checkpoint before the crash."))


def check_power_loss_restart(leo=None, hw=None, *, kafka_version: str | None = None
                             ) -> CheckResult:
    """Exercise: (LEO, HW) a follower loads after a power loss 0.5 s after the last write."""
    missing = _missing(leo, hw)
    if missing is not None:
        return missing
    right = _replay("power_loss", kafka_version=kafka_version)
    given = (_int(leo), _int(hw))
    if given == right:
        return _result(True, tr("LEO {v_0}, HW {v_1}: the page cache was not written back, and "
                                "a HW is never above the LEO.", v_0=right[0], v_1=right[1]))
    if given[0] != right[0]:
        return _result(False, tr("the LEO is wrong: nothing was fsynced (log.flush.interval.* "
                                 "are off by default) and the OS writes dirty pages back only "
                                 "after 30 s."))
    return _result(False, tr("the LEO is right. Can the loaded HW be above the log end?"))


def _verdict(fault: str, seed: int = SEED, kafka_version: str | None = None
             ) -> tuple[list[str], list[str]]:
    """All three brokers hit by ``fault`` 2 s after 5 acked writes, then started: the checkers'
    (violations, allowed losses) as invariant names."""
    c = Cluster(3, seed=seed, kafka_version=notebook_version(kafka_version, "checkpoints verdict"))
    suite = attach(c)
    c.create_topic(TOPIC, 1, 3)
    c.run(3000)
    p = c.producer("p", acks="all")
    for i in range(5):
        p.send(TOPIC, f"v{i}")
    c.run(2000)
    for b in (1, 2, 3):
        getattr(c, fault)(b)
    c.run(20000)
    for b in (1, 2, 3):
        c.start(b, retry=True)
    c.run(20000)
    return (sorted({v.invariant for v in suite.violations}),
            sorted({v.invariant for v in suite.allowed}))


def check_allowed_loss(fault=None, *, kafka_version: str | None = None) -> CheckResult:
    """Exercise graded by the checkers: the fault that, hitting all three brokers at once, loses
    acknowledged records (a loss the checkers classify as allowed by the configuration)."""
    missing = _missing(fault)
    if missing is not None:
        return missing
    if fault not in FAULTS:
        return _result(False, tr("answer with one of {FAULTS}, got {fault!r}",
                                 FAULTS=FAULTS, fault=fault))
    bad, allowed = _verdict(fault, kafka_version=kafka_version)
    if bad:
        return _result(False, tr("the checkers found violations {bad}: report this run.", bad=bad))
    if allowed:
        return _result(True, tr("{fault}: the checkers record {allowed} as an allowed loss: "
                                "acks=all means in the replicas' memory, not on their disks.",
                                fault=_fault_word(fault), allowed=allowed))
    return _result(False, tr("after {fault} of every broker the checkers find every "
                             "acknowledged record still there. Which fault loses what is only "
                             "in the page cache?", fault=_fault_word(fault)))
