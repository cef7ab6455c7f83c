"""A submission's source as a module: notebook code cells, classic stand-ins, module building."""
