"""Similarity between submissions (``rnngrade similarity``): copydetect's fingerprints, and an
HTML report of the most similar pairs side by side."""

DEFAULT_THRESHOLD = 0.5  # pairs listed: one of the two shares at least this much of its code
DEFAULT_TOP = 50  # pairs shown side by side
DEFAULT_SECONDS = 600.0  # the whole comparison; what is left when it runs out is listed
