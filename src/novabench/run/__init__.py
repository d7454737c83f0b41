"""See the package docstring of novabench."""
