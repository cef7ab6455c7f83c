"""Grading: the trusted side's fixtures and checks, the rubric, and the engine that runs a suite."""
