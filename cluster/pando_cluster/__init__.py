"""pando-cluster: bring a Pando cluster up, down, and report its status."""
