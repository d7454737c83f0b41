"""Gradio Space of the NOVA metric: paste or upload predictions, read scores with CIs.

The logic lives in ``novabench.spaces.metric``; this folder's ``nova_metric.py`` is the
evaluate module it scores with. ``NOVA_SOURCE`` (a Space variable), else
``nova_source.txt`` beside this file, names the NOVA data offered as references: a release folder, a ``nova export`` folder or a Hub dataset id;
without it, the toolkit's synthetic sample.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# `nova space build` vendors the novabench wheel beside this file until novabench is on the
# index; a pure-Python wheel imports straight from sys.path, so the Space runs exactly it.
for wheel in sorted(HERE.glob("novabench-*-py3-none-any.whl")):
    sys.path.insert(0, str(wheel))

from novabench.spaces import metric  # noqa: E402
from novabench.spaces.source import MAX_UPLOAD_BYTES, default_source  # noqa: E402

EXAMPLES = metric.EXAMPLES


def score(task, predictions_json, references_json, with_bertscore=False, **settings):
    """Score pasted JSON with the module in this folder; errors come back as {"error": ...}."""
    return metric.compute_json(
        HERE, task, predictions_json, references_json, with_bertscore=with_bertscore, **settings
    )


def build_demo():
    """The Space's interface."""
    return metric.build_demo(HERE, default_source(HERE) or None)


if __name__ == "__main__":
    # Gradio refuses larger uploads before storing them; the app reads them capped too.
    build_demo().launch(max_file_size=MAX_UPLOAD_BYTES)
