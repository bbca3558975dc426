"""The `kubesched` command line."""
