"""Submissions: loading a directory, .py, .ipynb or .zip into module source, and building it."""
