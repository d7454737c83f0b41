"""The one version of novabench: pyproject.toml reads it here when the package is built.

A bottom module, so any layer can say which toolkit wrote a file without importing the
package's entry points (``novabench/__init__.py``, the top layer).

Example:
    >>> import novabench
    >>> __version__ == novabench.__version__
    True
"""

__version__ = "0.1.0"
