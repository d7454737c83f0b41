"""Shared vocabularies, below both the metrics and the parsers.

- :mod:`novabench.lexicon.normalization`: the normalisation of diagnosis strings
  (``normalize_diagnosis``, ``diagnosis_aliases``) and the lookup keys built from it;
- :mod:`novabench.lexicon.statements`: reading a diagnosis statement (``read_diagnosis``):
  what it affirms, what it negates, its alternatives;
- :mod:`novabench.lexicon.diagnoses`: the diagnosis lexicon (names, synonyms, hierarchy),
  loaded from the data file ``novabench/resources/diagnosis_lexicon.txt``; it re-exports
  the public names of the two modules above;
- :mod:`novabench.lexicon.taxonomy`: pathology categories of the lexicon's entries.

Nothing here imports from ``novabench.metrics``, ``novabench.run`` or ``novabench.data``.
"""
