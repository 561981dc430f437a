"""pando-mgr: the cluster manager on etcd (mgr/README.md)."""
