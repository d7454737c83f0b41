"""The diagnosis lexicon: neurological diseases with synonyms, abbreviations and a hierarchy.

:class:`DiagnosisLexicon` is our own list of rare and common neurological diseases
(demyelinating, infectious, inflammatory, neoplastic, vascular, metabolic/toxic,
genetic/neurocutaneous, congenital, degenerative, traumatic). Each entry has a canonical
name, synonyms and abbreviations, one or more parents (``glioblastoma`` is-a ``glioma``)
and a few cue words of typical history and findings that a baseline can rank entries by.
Its table is the data file ``novabench/resources/diagnosis_lexicon.txt``; this module reads
it (:func:`load_diagnosis_lexicon`) and looks names up.

Entries marked as *categories* (``intracranial neoplasm``, ``cns infection``...) group the
tree; they are too vague to count as a diagnosis, so the matcher never accepts a category
in place of a specific disease.

Names are looked up after the normalisation of :mod:`novabench.lexicon.normalization`
(spellings, accents, possessives, roman numerals; keys ignore spaces and plural ``s``).
The normalisation (:func:`normalize_diagnosis`, :func:`diagnosis_aliases`) and the
statement reader (:func:`read_diagnosis`, :class:`DiagnosisReading`) are importable from
here too, as they were before they had modules of their own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from novabench.errors import NovaInputError
from novabench.lexicon.normalization import (
    _key,
    _key_from_tokens,
    diagnosis_aliases,
    normalize_diagnosis,
)
from novabench.lexicon.statements import DiagnosisReading, read_diagnosis

__all__ = [
    "DiagnosisEntry",
    "DiagnosisLexicon",
    "DiagnosisReading",
    "LEXICON_VERSION",
    "diagnosis_aliases",
    "load_diagnosis_lexicon",
    "normalize_diagnosis",
    "read_diagnosis",
]

# 4: 867 entries, merged diseases split (issue 20); 5: 944 entries, rare-disease name families,
# rules for model-style answers (issue 20); 6: 1055 entries, the rare-disease vocabulary family
# by family (aneurysms and dissections by artery, schwannomas by nerve, WHO CNS5 splits), "X,
# given Y" and a choice between alternatives read (issue 20). Reports record it, so scores of
# two versions are never compared silently.
LEXICON_VERSION = "nova-diagnosis-lexicon-6"
# The table itself is a data file beside the keyword lexicon (neuro_lexicon.json).
_TABLE_RESOURCE = "diagnosis_lexicon.txt"


@dataclass(frozen=True)
class DiagnosisEntry:
    """One disease of the lexicon.

    Attributes:
        name: canonical name (American spelling, lower case except eponyms).
        synonyms: other names, abbreviations and spelling variants.
        parents: more general entries this one is a kind of (first one is the main parent).
        cues: typical history and imaging words, for ranking entries by a case text.
        group: the section of the lexicon (``"neoplastic"``, ``"vascular"``...).
        is_category: a grouping node too vague to count as a diagnosis on its own.
    """

    name: str
    synonyms: tuple[str, ...]
    parents: tuple[str, ...]
    cues: tuple[str, ...]
    group: str
    is_category: bool = False

    @property
    def parent(self) -> str | None:
        """The main parent's name, or ``None`` for a root."""
        return self.parents[0] if self.parents else None

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name followed by every synonym."""
        return (self.name, *self.synonyms)


class DiagnosisLexicon:
    """Disease entries with an alias index and the is-a hierarchy.

    Build it with :func:`load_diagnosis_lexicon` (cached); the constructor validates that
    names are unique, parents exist, the hierarchy has no cycle and no alias names two
    different entries.

    Args:
        entries: the entries, in table order.

    Raises:
        NovaInputError: on a duplicate name, an unknown parent, a cycle or an ambiguous alias.

    Example:
        >>> lexicon = load_diagnosis_lexicon()
        >>> lexicon.lookup("GBM").name
        'glioblastoma'
        >>> lexicon.is_ancestor("glioma", "glioblastoma")
        True
    """

    def __init__(self, entries: Iterable[DiagnosisEntry]) -> None:
        self.entries: tuple[DiagnosisEntry, ...] = tuple(entries)
        self._by_name: dict[str, DiagnosisEntry] = {}
        for entry in self.entries:
            if entry.name in self._by_name:
                raise NovaInputError(
                    "duplicate lexicon entry",
                    source="diagnosis lexicon",
                    record=entry.name,
                    field="name",
                )
            self._by_name[entry.name] = entry
        for entry in self.entries:
            for parent in entry.parents:
                if parent not in self._by_name:
                    raise NovaInputError(
                        f"unknown parent {parent!r}",
                        source="diagnosis lexicon",
                        record=entry.name,
                        field="parents",
                    )
        self._ancestors: dict[str, frozenset[str]] = {}
        for entry in self.entries:
            self._ancestors[entry.name] = self._collect_ancestors(entry.name, ())
        self._index: dict[str, str] = {}
        self.max_alias_tokens = 1
        for entry in self.entries:
            for alias in entry.names:
                normalized = normalize_diagnosis(alias)
                key = _key(normalized)
                if not key:
                    continue
                owner = self._index.setdefault(key, entry.name)
                if owner != entry.name:
                    raise NovaInputError(
                        f"alias {alias!r} also names {owner!r}",
                        source="diagnosis lexicon",
                        record=entry.name,
                        field="synonyms",
                    )
                self.max_alias_tokens = max(self.max_alias_tokens, len(normalized.split()))
        self._keys_by_length: dict[int, list[str]] = {}
        for key in self._index:
            self._keys_by_length.setdefault(len(key), []).append(key)

    def _collect_ancestors(self, name: str, path: tuple[str, ...]) -> frozenset[str]:
        if name in path:
            raise NovaInputError(
                "cycle in the hierarchy: " + " -> ".join((*path, name)),
                source="diagnosis lexicon",
                record=name,
                field="parents",
            )
        found: set[str] = set()
        for parent in self._by_name[name].parents:
            found.add(parent)
            found |= self._collect_ancestors(parent, (*path, name))
        return frozenset(found)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> DiagnosisEntry:
        """The entry with this canonical name.

        Args:
            name: a canonical name.

        Raises:
            KeyError: no entry has that name.

        Example:
            >>> load_diagnosis_lexicon().get("tuberculous meningitis").parents
            ('meningitis', 'CNS tuberculosis')
        """
        return self._by_name[name]

    def ancestors(self, name: str) -> frozenset[str]:
        """Names of every entry above ``name`` in the hierarchy (all paths).

        Example:
            >>> sorted(load_diagnosis_lexicon().ancestors("pilomyxoid astrocytoma"))[:3]
            ['astrocytoma', 'glioma', 'intracranial neoplasm']
        """
        return self._ancestors[name]

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether ``ancestor`` lies above ``descendant`` in the hierarchy.

        Example:
            >>> load_diagnosis_lexicon().is_ancestor("meningitis", "tuberculous meningitis")
            True
        """
        return ancestor in self._ancestors[descendant]

    def lookup(self, text: str) -> DiagnosisEntry | None:
        """The entry whose name or alias is exactly ``text`` (after normalisation).

        Spaces, plural ``s`` and a trailing ``disease``/``syndrome``/``disorder`` do not
        matter; nothing else is guessed.

        Example:
            >>> load_diagnosis_lexicon().lookup("Wilson's").name
            'Wilson disease'
            >>> load_diagnosis_lexicon().lookup("glioma of the left frontal lobe") is None
            True
        """
        name = self._index.get(_key(normalize_diagnosis(text)))
        return self._by_name[name] if name else None

    def lookup_key(self, key: str) -> DiagnosisEntry | None:
        """The entry indexed under a lookup key built like the index (internal helper).

        Example:
            >>> load_diagnosis_lexicon().lookup_key("nf1").name
            'neurofibromatosis type 1'
        """
        name = self._index.get(key)
        return self._by_name[name] if name else None

    def keys_near_length(self, length: int, slack: int) -> Iterable[tuple[str, DiagnosisEntry]]:
        """Index keys whose length is within ``slack`` of ``length`` (for fuzzy lookups).

        Example:
            >>> any(e.name == "glioma" for _, e in load_diagnosis_lexicon().keys_near_length(6, 0))
            True
        """
        for size in range(max(1, length - slack), length + slack + 1):
            for key in self._keys_by_length.get(size, ()):
                yield key, self._by_name[self._index[key]]

    def find_mentions(
        self, normalized: str, *, short_names: bool = False
    ) -> tuple[list[DiagnosisEntry], list[str]]:
        """Disease names mentioned inside a normalised text, and the words left over.

        Spans are matched longest first and never overlap. Names of fewer than three
        letters (``ms``, ``ad``) are only looked for with ``short_names=True``, since they
        collide with ordinary words.

        Args:
            normalized: output of :func:`normalize_diagnosis`.
            short_names: also match names of one or two letters.

        Returns:
            ``(entries in text order, tokens not covered by any mention)``.

        Example:
            >>> found, rest = load_diagnosis_lexicon().find_mentions("right temporal glioblastoma")
            >>> [e.name for e in found], rest
            (['glioblastoma'], ['right', 'temporal'])
        """
        tokens = normalized.split()
        used = [False] * len(tokens)
        found: list[tuple[int, str]] = []
        for length in range(min(self.max_alias_tokens, len(tokens)), 0, -1):
            for start in range(len(tokens) - length + 1):
                if any(used[start : start + length]):
                    continue
                span = tokens[start : start + length]
                key = _key_from_tokens(span)
                if key not in self._index:
                    continue
                if len(key) < 3 and not short_names:
                    continue
                found.append((start, self._index[key]))
                used[start : start + length] = [True] * length
        found.sort()
        leftover = [t for t, u in zip(tokens, used) if not u]
        return [self._by_name[name] for _, name in found], leftover


def _parse_table(table: str, source: str = _TABLE_RESOURCE) -> list[DiagnosisEntry]:
    entries: list[DiagnosisEntry] = []
    group = ""
    for line_number, raw in enumerate(table.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("##"):
            group = line.lstrip("#").strip()
            continue
        if line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split("|")]
        if len(fields) != 4 or not fields[0]:
            raise NovaInputError(
                "expected 'name | synonyms | parents | cues'",
                source=source,
                record=f"line {line_number}",
            )
        name, synonyms, parents, cues = fields
        is_category = name.startswith("*")

        def split(cell: str) -> tuple[str, ...]:
            return tuple(part.strip() for part in cell.split(";") if part.strip())

        entries.append(
            DiagnosisEntry(
                name=name.lstrip("*").strip(),
                synonyms=split(synonyms),
                parents=split(parents),
                cues=split(cues),
                group=group,
                is_category=is_category,
            )
        )
    return entries


@lru_cache(maxsize=1)
def load_diagnosis_lexicon() -> DiagnosisLexicon:
    """The built-in diagnosis lexicon (built once, then cached).

    Returns:
        A :class:`DiagnosisLexicon`; ``.entries`` lists every disease with its canonical
        name, synonyms, parents and cue words.

    Example:
        >>> lexicon = load_diagnosis_lexicon()
        >>> len(lexicon.entries) > 200
        True
        >>> entry = lexicon.lookup("Devic's disease")
        >>> entry.name, entry.parent
        ('neuromyelitis optica spectrum disorder', 'demyelinating disease')
    """
    table = resources.files("novabench").joinpath("resources").joinpath(_TABLE_RESOURCE)
    return DiagnosisLexicon(_parse_table(table.read_text(encoding="utf-8")))
