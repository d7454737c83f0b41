"""NOVA for Hugging Face ``datasets``: the thin face of ``novabench.data.hf``.

NOVA (arXiv 2505.14064) is an evaluation-only brain-MRI benchmark; never train on it.
Loading scripts are no longer supported by ``datasets`` (>= 4), so import the builder or
call ``load_nova`` with a local copy of the release (official v1 or legacy layout), a
folder written by ``nova export``, or a Hub id (cached or online). This file is importable
from the repository root only; wherever novabench is installed, use
``from novabench import NovaBuilder, load_nova, read_release`` (the same objects)::

    from nova_dataset import load_nova, read_release

    images = load_nova("/path/to/Nova")                  # one row per image, split "test"
    cases = load_nova("/path/to/Nova", config="cases")   # one row per case
    print(read_release("/path/to/Nova").summary())       # counts and warnings

    from nova_dataset import NovaBuilder
    builder = NovaBuilder(config_name="images", data_dir="/path/to/Nova")
    builder.download_and_prepare()
    test = builder.as_dataset(split="test")
"""

from __future__ import annotations

from novabench.data.hf import NovaBuilder, load_nova
from novabench.data.release import read_release

__all__ = ["NovaBuilder", "load_nova", "read_release"]
