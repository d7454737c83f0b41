"""How to cite NOVA: one constant, used by the dataset card, the metric card and the builders."""

from __future__ import annotations

__all__ = ["NOVA_BIBTEX", "NOVA_ARXIV_URL", "NOVA_HUB_ID", "NOVA_LICENSE"]

NOVA_ARXIV_URL = "https://arxiv.org/abs/2505.14064"
NOVA_HUB_ID = "c-i-ber/Nova"
# The dataset card's licence; the release's croissant.json says CC BY 4.0, the card wins.
NOVA_LICENSE = "cc-by-nc-sa-4.0"

NOVA_BIBTEX = """\
@inproceedings{bercea2025nova,
  title         = {{NOVA}: A Benchmark for Rare Anomaly Localization and Clinical Reasoning in Brain {MRI}},
  author        = {Bercea, Cosmin I. and Li, Jun and Raffler, Philipp and Riedel, Evamaria O. and
                   Schmitzer, Lena and Kurz, Angela and Bitzer, Felix and Ro{\\ss}m{\\"u}ller, Paula and
                   Canisius, Julian and Beyrle, Mirjam L. and Liu, Che and Bai, Wenjia and
                   Kainz, Bernhard and Schnabel, Julia A. and Wiestler, Benedikt},
  booktitle     = {Advances in Neural Information Processing Systems (NeurIPS), Datasets and Benchmarks Track},
  year          = {2025},
  eprint        = {2505.14064},
  archivePrefix = {arXiv},
  primaryClass  = {eess.IV}
}
"""
