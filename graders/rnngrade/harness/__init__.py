"""The student side: everything that runs on a student's machine with the public tests, and
that the release ships as it is.

``rnngrade.testing`` is its public face; this package holds the checks library
(``harness.checks``: comparisons, tolerances, gradient checks, the pytest plugin behind the
``student`` fixture, the notebook runner), the in-process runner and module proxy
(``harness.runner``), turning a submission's source into a module (``harness.source``), the
shared number formatting and the worker-helper registry.

The package boundary is the trust boundary: nothing here imports the grader (the hidden suites,
the reference, mutants, sandbox, gradebook). The release's import audit
(``rnngrade.release.package``) checks it.
"""
