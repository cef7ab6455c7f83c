"""Running student code: in-process (for debugging) or in a sandboxed worker process."""
