"""Gradescope: the autograder bundle (``rnngrade gradescope``) and what runs inside it
(``rnngrade gradescope-run``, called by the bundle's ``run_autograder``)."""
