"""Speed of the NOVA metric against the reference libraries, side by side in one run.

1. localisation: 10,000 images x 10 predictions, ours vs pycocotools and
   faster-coco-eval called directly (``bench_localization.py``);
2. captioning: 1,000 pairs, ours vs sacrebleu, rouge_score, nltk and bert_score
   called directly (``bench_captioning.py``);
3. the evaluate face: ``evaluate.load("metrics/nova_metric", task).compute()`` vs the
   functional core on the same inputs (best of --repeats).

It prints seconds and ratios and asserts nothing: speed is never a test.

Usage:
    python scripts/bench_metric.py [--images 10000] [--pairs 1000] [--repeats 3] [--no-bertscore]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from novabench.metrics.caption_pairs import random_caption_pairs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_captioning import run_captioning_benchmark  # noqa: E402
from bench_localization import make_synthetic_set, run_localization_benchmark  # noqa: E402


def best_of(repeats: int, function: Callable[[], Any]) -> float:
    """Fastest wall time of ``repeats`` calls (the least disturbed by other load)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def run_face_overhead(n_images: int, n_pairs: int, repeats: int) -> dict[str, float]:
    """Time the evaluate face against the functional core on the same inputs.

    Example:
        >>> figures = run_face_overhead(50, 20, 1)  # doctest: +ELLIPSIS
        evaluate face vs functional core...
        >>> sorted(key for key in figures if key.startswith("localization"))
        ['localization_core_s', 'localization_face_over_core', 'localization_face_s']
    """
    import evaluate

    from novabench.metrics.captioning import score_captioning
    from novabench.metrics.localization import LocalizationWarning, score_localization

    module = str(HERE.parent / "metrics" / "nova_metric")
    predictions, references = make_synthetic_set(n_images, 10, seed=0)
    captions, reference_captions = random_caption_pairs(n_pairs, seed=0)
    options = {"exclude": ["BERTScore-F1"]}
    localization = evaluate.load(module, "localization")
    captioning = evaluate.load(module, "captioning")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        figures = {
            "localization_core_s": best_of(
                repeats, lambda: score_localization(predictions, references)
            ),
            "localization_face_s": best_of(
                repeats,
                lambda: localization.compute(predictions=predictions, references=references),
            ),
            "captioning_core_s": best_of(
                repeats, lambda: score_captioning(captions, reference_captions, **options)
            ),
            "captioning_face_s": best_of(
                repeats,
                lambda: captioning.compute(
                    predictions=captions, references=reference_captions, **options
                ),
            ),
        }
    print(f"evaluate face vs functional core (best of {repeats})")
    for task, size in (
        ("localization", f"{n_images} images x 10 boxes"),
        ("captioning", f"{n_pairs} pairs, no BERTScore"),
    ):
        core, face = figures[f"{task}_core_s"], figures[f"{task}_face_s"]
        figures[f"{task}_face_over_core"] = face / core
        print(
            f"  {task:<13} {size:<28} core {core:7.3f} s   face {face:7.3f} s   face/core {face / core:5.2f}x"
        )
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=10000)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-bertscore", action="store_true")
    args = parser.parse_args(argv)

    print("== 1. localisation: ours vs pycocotools vs faster-coco-eval")
    run_localization_benchmark(args.images, 10, 0)
    print("\n== 2. captioning: ours vs the reference libraries")
    result = run_captioning_benchmark(args.pairs, 0, bertscore=not args.no_bertscore)
    print(
        f"{'metric':<14}{'ours s':>10}{'library s':>11}{'library/ours':>14}{'ours':>12}{'library':>12}"
    )
    for row in result["rows"]:
        print(
            f"{row['metric']:<14}{row['ours_s']:>10.3f}{row['reference_s']:>11.3f}{row['speedup']:>13.1f}x"
            f"{row['ours']:>12.6f}{row['reference']:>12.6f}"
        )
    print(f"bootstrap, 1000 resamples of BLEU-4 + ROUGE-L: {result['bootstrap_1000_s']:.3f} s")
    print("\n== 3. the evaluate face")
    run_face_overhead(args.images, args.pairs, args.repeats)


if __name__ == "__main__":
    main()
