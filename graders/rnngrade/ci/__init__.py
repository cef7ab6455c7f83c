"""Pull-request feedback: ``rnngrade ci`` grades the labs a pull request touches and keeps one
feedback comment on it up to date (``run``), through a small GitHub REST client (``github``)."""
