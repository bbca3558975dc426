"""kubernetes-sigs/scheduler-plugins' plugins for kubesched, written against `kubesched.plugin` only.

Installed, the distribution declares its plugins under the entry-point group `kubesched.plugins`,
so `kubesched run`, `kubesched plugins` and every other command find them by name.
"""
