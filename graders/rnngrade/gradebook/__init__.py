"""Batch grading into a gradebook: entries and their hashes (``entries``), the SQLite store
(``store``), local and Dask executors (``executors``), the resumable batch (``batch``), exports
(``export``: grades.csv, summary.html) and the terminal display (``console``)."""
