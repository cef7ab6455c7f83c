"""rnngrade: exercises, hidden suites and a sandboxed auto-grader for recurrent networks."""

__version__ = "0.1.0"
