"""Localisation runs of known answers, each scored by ``nova evaluate``, for report tests.

A model either answers every image with its gold boxes or with no box, so its scores are
known without scoring code (1 or 0 per image with a gold box).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from novabench.cli import main
from novabench.data.release import read_release
from novabench.run.predictions import RunManifest


def write_scored_runs(
    release: Path,
    folder: Path,
    models: Mapping[str, bool],
    options: Sequence[str],
    *,
    markdown: bool = False,
) -> dict[str, Path]:
    """Per model (name -> answers with the gold boxes?) a run file with its manifest, and its
    report (``--out MODEL.report.json --items MODEL`` plus ``options``; with ``markdown``
    also ``--markdown MODEL.md``), in ``folder``.

    Returns ``{model: run file, "MODEL report": report}``.
    """
    images = read_release(release).images
    made: dict[str, Path] = {}
    for model, boxes in models.items():
        run = folder / f"{model}.jsonl"
        lines = [{"filename": i.filename, "boxes": i.boxes if boxes else []} for i in images]
        run.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        RunManifest(model=model).write(run)
        report = folder / f"{model}.report.json"
        args = ["evaluate", "--data", str(release), "--predictions", str(run), "--out", str(report)]
        extra = ["--markdown", str(folder / f"{model}.md")] if markdown else []
        assert main([*args, "--items", str(folder / model), *extra, *options]) == 0
        made[model], made[f"{model} report"] = run, report
    return made
