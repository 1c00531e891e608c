"""The control plane: ZooKeeper and its controller, the KRaft quorum and controller, placement."""
