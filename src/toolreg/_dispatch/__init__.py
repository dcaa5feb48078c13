"""Calling tools: dispatch, its cached per-tool plans, timeouts, workers, batches, traces."""
