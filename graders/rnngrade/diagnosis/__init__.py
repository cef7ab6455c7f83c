"""Naming a student's mistake: mutants of the reference and shape-of-wrongness heuristics."""
