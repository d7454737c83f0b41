"""The caption overlap metrics live one per module; ``novabench.metrics.text`` still names them all."""

from __future__ import annotations

import importlib

import pytest

from novabench.metrics import text

# Every public name novabench.metrics.text had before the split (its __all__, plus
# NO_SYNONYMS, which the benchmark script reads), and the module that now owns it.
OWNERS = {
    "novabench.metrics.tokenizers": ["tokenize_13a", "tokenize_meteor", "tokenize_rouge"],
    "novabench.metrics.bleu": [
        "BLEU_MAX_ORDER",
        "bleu_from_statistics",
        "bleu_from_statistics_rows",
        "bleu_statistics",
        "corpus_bleu",
    ],
    "novabench.metrics.rouge": ["lcs_length", "rouge_l_f1", "rouge_l_scores"],
    "novabench.metrics.meteor": [
        "METEOR_ALPHA",
        "METEOR_BETA",
        "METEOR_GAMMA",
        "METEOR_SETTINGS",
        "NO_SYNONYMS",
        "WORDNET_INSTALL",
        "WORDNET_VERSION",
        "meteor",
        "meteor_alignment",
        "meteor_fallback_note",
        "meteor_scores",
        "meteor_variant",
        "nltk_version",
        "resolve_meteor_setting",
        "wordnet_problem",
    ],
}


@pytest.mark.parametrize("owner", sorted(OWNERS))
def test_each_name_is_the_owning_modules_object(owner):
    module = importlib.import_module(owner)
    for name in OWNERS[owner]:
        assert name in module.__all__, (owner, name)
        assert getattr(text, name) is getattr(module, name), name


def test_text_exports_exactly_the_names_of_the_four_modules():
    owned = {name for names in OWNERS.values() for name in names}
    assert set(text.__all__) == owned
    for owner in OWNERS:
        assert set(importlib.import_module(owner).__all__) <= owned, owner


def test_every_old_import_path_still_works():
    namespace: dict[str, object] = {}
    exec("from novabench.metrics.text import *", namespace)  # what a user's star import sees
    assert {name for name in namespace if not name.startswith("__")} == set(text.__all__)
    assert text.tokenize_rouge("Ring-enhancing lesions", True) == ("ring", "enhanc", "lesion")


def test_a_name_one_module_adds_is_exported_without_editing_text(monkeypatch):
    import importlib.util

    from novabench.metrics import rouge

    # A new ROUGE variant added to its module's __all__ only.
    monkeypatch.setattr(rouge, "rouge_lsum_f1", lambda prediction, reference: 0.0, raising=False)
    monkeypatch.setattr(rouge, "__all__", [*rouge.__all__, "rouge_lsum_f1"])
    spec = importlib.util.spec_from_file_location("fresh_text", text.__file__)
    assert spec is not None and spec.loader is not None
    fresh = importlib.util.module_from_spec(spec)  # a second copy: text itself stays as it is
    spec.loader.exec_module(fresh)
    assert "rouge_lsum_f1" in fresh.__all__ and fresh.rouge_lsum_f1 is rouge.rouge_lsum_f1
    assert set(fresh.__all__) == set(text.__all__) | {"rouge_lsum_f1"}
