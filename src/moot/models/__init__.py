"""Everything about model files: the catalog, the store, pulls from the hub and PyPI, checks."""
