"""The sandbox fixtures, for the outcome tests that need a real worker."""

from ..sandbox.conftest import sandbox, sandbox_available  # noqa: F401 - fixtures
