"""sched-vis: charts and checks of scheduler event traces (sched_events)."""

__version__ = "0.1.0"
