"""Seeded random caption pairs: inputs for checking and timing the captioning metrics.

The pairs mimic neuroradiology captions and carry what tokenisers trip on (hyphens,
decimals, units, brackets, HTML entities, accents, ligatures, case changes, a sacrebleu
``<skipped>`` marker, empty and blank predictions, line breaks). The parity tests
(``tests/metrics/test_text_parity.py``) and the benchmarks (``scripts/bench_captioning.py``,
``scripts/bench_metric.py``) draw from the same generator.
"""

from __future__ import annotations

import random

__all__ = ["CAPTION_WORDS", "random_caption_pairs"]

# Word pieces of neuroradiology captions, with the things tokenisers trip on.
CAPTION_WORDS: tuple[str, ...] = tuple(
    (
        "axial sagittal coronal FLAIR T1-weighted T2-weighted T2w T1w DWI ADC SWI post-contrast "
        "gadolinium-enhanced image MRI shows demonstrates reveals a an the of in with and or no "
        "without there is are large small ill-defined well-circumscribed heterogeneous "
        "hyperintense hypointense isointense lesion lesions mass cyst oedema edema haemorrhage "
        "hemorrhage infarct calcification ring-enhancing enhancement restricted diffusion "
        "midline shift hydrocephalus atrophy left right bilateral frontal parietal temporal "
        "occipital lobe thalamus basal ganglia cerebellum pons midbrain corpus callosum "
        "periventricular white matter meninges dura ventricle 3.5 cm 12mm 2,5 (arrow) [arrowhead] "
        "1/3 e.g. 45-year-old T2/FLAIR &amp; &quot;target&quot; œdème café naïve Ætiology ﬁbrous "
        "İnsula <skipped> mass-effect 10-15 mm , . ; : ! ?"
    ).split()
)


def random_caption_pairs(n_pairs: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Seeded random (prediction, reference) caption pairs for parity tests and benchmarks.

    References have 3 to 30 words from :data:`CAPTION_WORDS` (about 3% joined by line
    breaks); predictions are an edited copy of their reference (words dropped, swapped for
    random ones, case changed), an unrelated caption, an empty string (about 5%) or
    whitespace only (about 2%).

    Args:
        n_pairs: how many pairs.
        seed: random seed; the same seed gives the same pairs.

    Returns:
        ``(predictions, references)``, two lists of ``n_pairs`` strings.

    Example:
        >>> predictions, references = random_caption_pairs(3, seed=1)
        >>> len(predictions), all(reference.strip() for reference in references)
        (3, True)
        >>> random_caption_pairs(3, seed=1) == (predictions, references)
        True
    """
    rng = random.Random(seed)
    predictions: list[str] = []
    references: list[str] = []
    for _ in range(n_pairs):
        reference_words = [rng.choice(CAPTION_WORDS) for _ in range(rng.randint(3, 30))]
        roll = rng.random()
        if roll < 0.05:
            prediction = ""
        elif roll < 0.07:
            prediction = rng.choice([" ", "\t", " \n "])
        elif roll < 0.25:
            prediction = " ".join(rng.choice(CAPTION_WORDS) for _ in range(rng.randint(1, 30)))
        else:
            words = []
            for word in reference_words:
                edit = rng.random()
                if edit < 0.15:
                    continue
                if edit < 0.3:
                    word = rng.choice(CAPTION_WORDS)
                elif edit < 0.38:
                    word = word.upper() if rng.random() < 0.5 else word.capitalize()
                words.append(word)
            prediction = " ".join(words)
        joiner = "\n" if rng.random() < 0.03 else " "
        predictions.append(prediction)
        references.append(joiner.join(reference_words))
    return predictions, references
