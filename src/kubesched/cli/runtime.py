"""Process settings every `kubesched` command applies before it starts work."""

from __future__ import annotations

import gc

GC_THRESHOLDS = (50_000, 20, 10)


def tune_gc() -> None:
    """Run the cyclic garbage collector less often.

    kubesched holds many small, long-lived, reference-free objects (API objects and their views).
    At Python's default thresholds the collector rescans them every few hundred allocations and
    costs more than half of the store's create+bind time (docs/performance.md). Objects alive at
    start-up are frozen out of the collector's view.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
