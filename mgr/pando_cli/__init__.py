"""pando: the admin command line (mgr/README.md)."""
