"""Backends of the victim-choice model (:mod:`bbopt.models.preemption`)."""
