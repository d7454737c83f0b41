"""Gradio Space: the NOVA explorer (cases, slices, boxes, texts, a model's answers).

The logic lives in ``novabench.spaces.explorer``. ``NOVA_SOURCE`` (a Space variable), else
``nova_source.txt`` beside this file, picks the data: a release folder, a ``nova export``
folder or a Hub dataset id; without either the toolkit's synthetic sample is shown, with a
notice saying so.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# `nova space build` vendors the novabench wheel beside this file until novabench is on the
# index; a pure-Python wheel imports straight from sys.path, so the Space runs exactly it.
for wheel in sorted(HERE.glob("novabench-*-py3-none-any.whl")):
    sys.path.insert(0, str(wheel))

from novabench.spaces.explorer import build_demo, launch  # noqa: E402
from novabench.spaces.source import default_source  # noqa: E402

__all__ = ["build_demo", "launch"]

if __name__ == "__main__":
    launch(default_source(HERE))
