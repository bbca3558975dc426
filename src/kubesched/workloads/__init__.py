"""scheduler_perf-style workloads: create nodes and pods, schedule, measure pods per second."""
