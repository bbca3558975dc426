"""kubesched: the Kubernetes scheduler in Python, with the lab it is learned and tested in."""
