"""kubesched's web UI: the cluster, the queue and every decision of one scheduler, live in a browser.

`mount(app, Mirror(scheduler))` adds the UI to an aiohttp application (the scheduler's own server,
on its port under `/ui/`): static pages shipped in this package (no build step, no library fetched at
run time), JSON documents of what the scheduler sees (`documents`), and a server-sent-events
stream of what changes (`mirror`), fed by the scheduler's informers and trace.
`mount_replay(app, Recording.load(path))` serves the same pages over a recorded run's trace
(`replay`), at any moment of it; `mount_sweep(app, DIR)` a sweep's results, any point of which
is run again and replayed the same way (`sweep`).
"""

from kubesched.ui.actions import Actions
from kubesched.ui.comparison import ComparisonError, load_comparison
from kubesched.ui.mirror import Mirror
from kubesched.ui.replay import Recording, RecordingError
from kubesched.ui.routes import mount, mount_comparison, mount_replay, serve_pages
from kubesched.ui.sweep import mount_sweep

__all__ = [
    "Actions",
    "ComparisonError",
    "Mirror",
    "Recording",
    "RecordingError",
    "load_comparison",
    "mount",
    "mount_comparison",
    "mount_replay",
    "mount_sweep",
    "serve_pages",
]
