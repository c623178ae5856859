"""Private parts of the worker runtime, one loop per module."""
