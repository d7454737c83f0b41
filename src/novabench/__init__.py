"""novabench: the reference toolkit for the NOVA brain-MRI benchmark.

Sub-packages, in the direction data flows:

- ``novabench.data``: read the official release (both layouts), the synthetic
  sample release, NIfTI ingestion, Hub/COCO export, the ``datasets`` builder.
- ``novabench.run``: task prompts, answer parsers, prediction files, the runner
  and the floor baselines.
- ``novabench.metrics``: the functional metric core (localisation, captioning,
  diagnosis, bootstrap statistics) behind the ``evaluate`` module.
- ``novabench.cli``: the ``nova`` command.

The public entry points of an installed package (``pip install novabench``), importable
from anywhere::

    from novabench import evaluate_model, list_presets, load_nova, read_release
    images = load_nova("/path/to/Nova")          # a release folder, an export or a Hub id
    report = evaluate_model(pipe, "/path/to/Nova", run_file="runs/mine.jsonl")  # run + score
    list_presets()   # {name: description} of what evaluate_model(..., preset=NAME) takes

They are imported on first use, so ``import novabench`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novabench._version import __version__
from novabench.errors import NovaError, NovaInputError

__all__ = [
    "CallableBackend",
    "Endpoint",
    "NovaBuilder",
    "NovaError",
    "NovaInputError",
    "NovaReport",
    "PRESETS",
    "__version__",
    "evaluate_model",
    "list_presets",
    "load_nova",
    "metric_path",
    "read_release",
]

if TYPE_CHECKING:
    from novabench.data.hf import NovaBuilder, load_nova
    from novabench.data.release import read_release
    from novabench.evaluator import CallableBackend, Endpoint, NovaReport, evaluate_model
    from novabench.metric_module import metric_path
    from novabench.run.presets import PRESETS, list_presets

# Imported on first use: they pull in `datasets` and pyarrow.
_LAZY = {
    "CallableBackend": "novabench.evaluator",
    "Endpoint": "novabench.evaluator",
    "NovaReport": "novabench.evaluator",
    "evaluate_model": "novabench.evaluator",
    "NovaBuilder": "novabench.data.hf",
    "load_nova": "novabench.data.hf",
    "read_release": "novabench.data.release",
    "metric_path": "novabench.metric_module",
    "PRESETS": "novabench.run.presets",
    "list_presets": "novabench.run.presets",
}


def __getattr__(name: str) -> Any:
    """``novabench.load_nova`` and the other public entry points, imported on first use.

    Example:
        >>> import novabench
        >>> novabench.load_nova.__module__
        'novabench.data.hf'
    """
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'novabench' has no attribute {name!r}")
