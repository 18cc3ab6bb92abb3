"""Workload readers and generators."""
