"""A submission's source as a module: notebook code cells, platform modules, module building."""
