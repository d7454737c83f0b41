"""novabench: the reference toolkit for the NOVA brain-MRI benchmark.

Sub-packages, in the direction data flows:

- ``novabench.data``: read the official release (both layouts), the synthetic
  sample release, NIfTI ingestion, Hub/COCO export, the ``datasets`` builder.
- ``novabench.run``: task prompts, answer parsers, prediction files, the runner
  and the floor baselines.
- ``novabench.metrics``: the functional metric core (localisation, captioning,
  diagnosis, bootstrap statistics) behind the ``evaluate`` module.
- ``novabench.cli``: the ``nova`` command.
"""

from __future__ import annotations

from novabench.errors import NovaError, NovaInputError

__version__ = "0.1.0"

__all__ = ["NovaError", "NovaInputError", "__version__"]
