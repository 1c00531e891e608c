"""The runtime: the event engine, the network, the broker shell, the clients and the Cluster
façade that learners use, with its trace, metrics and read views."""
