"""The results data model and its renderers."""
