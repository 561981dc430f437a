"""Test harness for Pando: namespaces, daemons, and protocol clients."""
