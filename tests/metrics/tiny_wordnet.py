"""A small WordNet database in the files nltk reads, so the WordNet path of METEOR runs offline.

No package ships nltk's ``corpora/wordnet`` (it is a download), so tests build their own:
the same file names and line formats as the WordNet 3.0 database nltk's
``WordNetCorpusReader`` loads (``lexnames``, ``index.<pos>``, ``data.<pos>`` whose synset
lines start at the byte offset they carry, ``<pos>.exc``, ``index.sense``), holding a few
noun synsets of words radiology captions use. The header line only gives nltk's version
probe the "WordNet 3.0 Copyright" it looks for; the content is ours.
"""

from __future__ import annotations

from pathlib import Path

#: Synonym sets of the test corpus (nouns): words of one set match in METEOR's synonym stage.
SYNSETS: tuple[tuple[str, ...], ...] = (
    ("tumour", "tumor", "neoplasm"),
    ("haemorrhage", "hemorrhage", "bleeding"),
    ("oedema", "edema", "swelling"),
    ("lesion", "wound"),
)

_HEADER = "  1 WordNet {version} Copyright line for nltk's version probe; a test corpus.\n"
_LEXNAMES = ("adj.all\t3", "adv.all\t4", "noun.state\t1", "verb.body\t2")
_NOUN_LEXNAME = 2
_POS_FILES = ("adj", "adv", "noun", "verb")


def write_tiny_wordnet(nltk_data: Path, *, version: str = "3.0") -> Path:
    """Write ``corpora/wordnet`` under ``nltk_data`` (a folder to put on ``nltk.data.path``).

    ``version`` is the WordNet version nltk's ``get_version()`` will read from the header.

    Returns:
        The ``corpora/wordnet`` folder.
    """
    folder = nltk_data / "corpora" / "wordnet"
    folder.mkdir(parents=True)
    (folder / "lexnames").write_text(
        "".join(f"{index:02d}\t{entry}\n" for index, entry in enumerate(_LEXNAMES))
    )
    header = _HEADER.format(version=version)
    data_lines = [header]
    index_lines = []
    offset = len(header.encode())
    for words in SYNSETS:
        # offset, lexicographer file, pos, word count (hex), word + lex id pairs, no
        # pointers, then the gloss after "|"
        members = " ".join(f"{word} 0" for word in words)
        line = f"{offset:08d} {_NOUN_LEXNAME:02d} n {len(words):02x} {members} 000 | test synset\n"
        data_lines.append(line)
        # lemma, pos, synsets, pointer symbols, senses, tagged senses, synset offsets
        index_lines += [f"{word} n 1 0 1 0 {offset:08d}\n" for word in words]
        offset += len(line.encode())
    for pos in _POS_FILES:
        data = data_lines if pos == "noun" else [header]
        (folder / f"data.{pos}").write_text("".join(data))
        (folder / f"index.{pos}").write_text("".join(sorted(index_lines)) if pos == "noun" else "")
        (folder / f"{pos}.exc").write_text("")
    (folder / "index.sense").write_text("")
    (folder / "cntlist.rev").write_text("")
    return folder
