"""Storage: a replica's log, its leader-epoch cache and (later) its checkpoint files."""

from kafkasim.storage.leader_epoch import EpochEntry, LeaderEpochFileCache
from kafkasim.storage.log import Log, RecordChunk

__all__ = ["EpochEntry", "LeaderEpochFileCache", "Log", "RecordChunk"]
