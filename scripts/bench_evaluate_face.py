"""What the evaluate face pays for using only evaluate's public batch mechanism.

Two ways to store batches and hand ``_compute`` its columns:

- ``private``: the face before issue 21: each normalised batch written with evaluate's
  private Arrow writer (``self.writer.write_batch``, skipping ``Features.encode_batch``),
  the columns read as Arrow (``_module_info.format = "arrow"``, set after construction
  because ``MetricInfo`` refuses a format with nested features) and scored from Arrow
  buffers (``evaluate_adapter.compute_task_from_arrow``);
- ``public``: the face now (``metrics/nova_metric/nova_metric.py``): evaluate's own
  ``add_batch`` and ``MetricInfo`` as documented, so ``_compute`` gets Python lists and
  scores them with ``compute_task``.

Each variant runs in a fresh process on NOVA-size inputs (906 images, 1 to 3 gold boxes,
0 to 5 predicted boxes, 60 % of gold boxes found nearby, scores on half the images;
``all`` adds a caption and five
diagnoses per image) added in batches of 32, then ``compute()``. It prints the best wall
time of ``--repeats`` runs for adding and for computing, and the peak resident memory the
process reached beyond what it held after loading the module. Nothing is asserted: speed
is never a test.

Usage:
    python scripts/bench_evaluate_face.py [--images 906] [--repeats 5] [--task localization]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

VARIANTS = ("private", "public")

_CHILD = r"""
import json, random, resource, sys, time, warnings
import evaluate
from novabench import metric_path
from novabench.metrics import evaluate_adapter

variant, task, n_images, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
warnings.simplefilter("ignore")
loaded = evaluate.load(metric_path(), task)
Face = type(loaded)


class PrivateWriter(Face):
    '''The face before issue 21: evaluate's private writer, columns read as Arrow.'''

    def __init__(self, config_name=None, **kwargs):
        super().__init__(config_name=config_name, **kwargs)
        self._module_info.format = "arrow"

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        '''Normalise, then write with evaluate's private writer (no per-value encode).'''
        start = getattr(self, "_nova_items_added", 0)
        batch = {
            "predictions": evaluate_adapter.normalize_predictions(task, predictions, start_index=start),
            "references": evaluate_adapter.normalize_references(task, references, start_index=start),
        }
        if self.writer is None:
            self.selected_feature_format = self._infer_feature_from_batch(batch)
            self._init_writer()
        self.writer.write_batch(batch)
        self._nova_items_added = start + len(batch["predictions"])

    def _compute(self, predictions, references, **kwargs):
        self._nova_items_added = 0
        return evaluate_adapter.compute_task_from_arrow(task, predictions, references, **kwargs)


rng = random.Random(0)
def box():
    x, y = rng.uniform(0, 400), rng.uniform(0, 400)
    return [x, y, rng.uniform(5, 80), rng.uniform(5, 80)]
predictions, references = [], []
for index in range(n_images):
    gold = [box() for _ in range(rng.randint(1, 3))]
    near = [[g[0] + rng.uniform(-4, 4), g[1] + rng.uniform(-4, 4), g[2], g[3]] for g in gold if rng.random() < 0.6]
    boxes = (near + [box() for _ in range(rng.randint(0, 2))])[:5]
    prediction = {"boxes": boxes, "scores": [rng.random() for _ in boxes] if index % 2 else None}
    reference = {"boxes": gold}
    if task == "all":
        prediction = {**prediction, "caption": "Axial FLAIR: hyperintense lesion in the left frontal lobe.",
                      "diagnoses": ["glioma", "abscess", "metastasis", "lymphoma", "demyelination"]}
        reference = {**reference, "caption": "Axial T2-weighted image: right temporal mass with oedema.",
                     "final_diagnosis": "Glioblastoma", "case_id": f"case{index // 3 + 1:04d}",
                     "clinical_history": "Seizures.", "filename": f"case{index // 3 + 1:04d}_{index % 3 + 1:03d}.png"}
    predictions.append(prediction)
    references.append(reference)
options = {"exclude": ["BERTScore-F1"], "meteor": "exact+stem"} if task == "all" else {}

cls = {"private": PrivateWriter, "public": Face}[variant]
module = cls(config_name=task)
baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
add_times, compute_times, result = [], [], None
for _ in range(repeats):
    started = time.perf_counter()
    for begin in range(0, n_images, 32):
        module.add_batch(predictions=predictions[begin:begin + 32], references=references[begin:begin + 32])
    added = time.perf_counter()
    result = module.compute(**options)
    add_times.append(added - started)
    compute_times.append(time.perf_counter() - added)
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
headline = result["localization"] if task == "all" else result
print(json.dumps({"add_s": min(add_times), "compute_s": min(compute_times),
                  "peak_mb": (peak_kb - baseline_kb) / 1024, "mAP@30": headline["mAP@30"]}))
"""


def run_variant(variant: str, task: str, images: int, repeats: int) -> dict[str, float]:
    """One variant in a fresh interpreter: best add and compute times, peak memory (MB)."""
    finished = subprocess.run(
        [sys.executable, "-c", _CHILD, variant, task, str(images), str(repeats)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
    )
    if finished.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{finished.stderr[-3000:]}")
    return dict(json.loads(finished.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    """Print each variant's figures for the chosen task and size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=906)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--task", default="localization", choices=["localization", "all"])
    args = parser.parse_args(argv)
    print(f"{args.task}, {args.images} images in batches of 32, best of {args.repeats}")
    print(f"{'variant':<14} {'add_batch s':>11} {'compute s':>10} {'peak MB':>8}  mAP@30")
    for variant in VARIANTS:
        figures = run_variant(variant, args.task, args.images, args.repeats)
        print(
            f"{variant:<14} {figures['add_s']:>11.3f} {figures['compute_s']:>10.3f} "
            f"{figures['peak_mb']:>8.1f}  {figures['mAP@30']:.6f}"
        )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    raise SystemExit(main())
