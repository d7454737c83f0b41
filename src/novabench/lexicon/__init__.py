"""Shared vocabularies, below both the metrics and the parsers.

- :mod:`novabench.lexicon.diagnoses`: the diagnosis lexicon (names, synonyms, hierarchy)
  and the normalisation of diagnosis strings; its table is the data file
  ``novabench/resources/diagnosis_lexicon.txt``.

Nothing here imports from ``novabench.metrics``, ``novabench.run`` or ``novabench.data``.
"""
