"""Latency checks: replaying harness requests against an endpoint and judging the timings.

Modules: `measure` (streaming replay at several concurrency levels), `percentile`
(percentiles and distributions), `profiles` (gate profiles such as `h20` and their checks).
"""
