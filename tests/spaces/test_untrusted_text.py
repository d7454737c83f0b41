"""What the Spaces show of other people's text and files: text only, bounded in size.

Release text (title, history, diagnosis, captions, extra keys such as a case link), an
uploaded predictions file's name and a ``?case=`` link value are someone else's: the
Markdown the explorer renders must hold no image, link or HTML from them, the link value
is never shown, and uploads are capped before they are read or put into the page. These
are the pure functions behind the Gradio faces (no Gradio needed); the browser test
drives the faces themselves.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import lxml.html
import pytest

from novabench.errors import NovaInputError
from novabench.escaping import visible_text
from novabench.spaces import explorer, metric, source
from tests.test_escaping import BARE_LINK, HIDDEN, HOSTILE, unescaped_markup


def hostile_case(text: str) -> SimpleNamespace:
    image = SimpleNamespace(filename="case0001_001.png", caption=text, boxes=[[0, 0, 4, 4]])
    return SimpleNamespace(
        case_id="case0001",
        title=text,
        publication_date=text,
        clinical_history=text,
        final_diagnosis=text,
        extra={"link": text, "differential_diagnosis": text},
        images=[image],
    )


@pytest.mark.parametrize("text", HOSTILE)
def test_case_view_shows_hostile_release_text_as_text(text: str) -> None:
    answers = explorer.ModelAnswers(
        text, captions={"case0001_001.png": text}, diagnoses={"case0001": [text, text]}
    )
    markdown = explorer.case_markdown(hostile_case(text), answers)
    assert not HIDDEN.search(markdown) and not BARE_LINK.search(markdown)
    # The view's own markup is bold, a heading, a code span, table pipes and <br>; nothing
    # from the text may open an image, a link, an entity or any other tag.
    left = unescaped_markup(markdown.replace("<br>", ""))
    assert not {"!", "[", "]", "&", "<", ">", "~", "$"} & set(left), left


def test_case_view_keeps_the_line_breaks_of_a_history() -> None:
    case = hostile_case("x")
    case.clinical_history = "Headache.\nThen <b>seizures</b>."
    markdown = explorer.case_markdown(case)
    assert "Headache.<br>Then \\<b\\>seizures\\</b\\>." in markdown


@pytest.mark.parametrize(
    "wanted",
    ["x`![a](http://tracker.invalid/p.png)`", "<img src=x onerror=alert(1)>", "case0001\u202e"],
)
def test_a_case_link_to_an_unknown_case_is_never_reflected(wanted: str) -> None:
    note = explorer.link_note_text(wanted, ["case0001", "case0002"])
    assert note and wanted not in note and "tracker" not in note and "<" not in note
    assert explorer.link_note_text("case0002", ["case0001", "case0002"]) == ""


def test_legend_shows_rater_names_as_text() -> None:
    names = ["<script>alert(1)</script>", 'r"><img src=x onerror=alert(1)>', "a\u202eb"]
    tree = lxml.html.fragment_fromstring(explorer.legend_html(names, with_model=True))
    assert tree.xpath("//script | //img") == []
    shown = tree.text_content()
    assert all(visible_text(name) in shown for name in names)


def test_the_explorer_refuses_an_upload_over_the_cap_before_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with open(path, "wb") as stream:  # sparse: no 50 MB written to the disk
        stream.truncate(source.MAX_UPLOAD_BYTES + 1)
    with pytest.raises(NovaInputError, match=r"^run.jsonl: larger than the 52,428,800 bytes"):
        source.check_upload_size(path, "run.jsonl")
    assert source.check_upload_size(path, "run.jsonl", limit=source.MAX_UPLOAD_BYTES + 1) > 0


def test_read_upload_stops_at_the_cap_without_trusting_the_size(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"[1]\n" * 1000)
    assert source.read_upload(path, "p.jsonl", limit=4000).count("[1]") == 1000
    with pytest.raises(NovaInputError, match="p.jsonl: larger than the 3,999 bytes"):
        source.read_upload(path, "p.jsonl", limit=3999)
    path.write_bytes(b'["caf\xe9"]')  # Latin-1, not UTF-8
    with pytest.raises(NovaInputError, match="p.jsonl: not UTF-8 text"):
        source.read_upload(path, "p.jsonl")


def test_a_large_upload_stays_a_file_and_only_a_note_reaches_the_editor(tmp_path: Path) -> None:
    path = tmp_path / "refs.json"
    line = '{"case_id": "case0001", "diagnoses": ["Glioma"]}\n'
    path.write_text(line * (metric.MAX_SHOWN_UPLOAD_BYTES // len(line) + 1), encoding="utf-8")
    note, kept = metric.upload_to_editor(path, "refs.json")
    assert kept == str(path) and "\n" not in note and len(note) < 200
    assert note.startswith("// refs.json: ") and "bytes uploaded" in note
    # Score reads the file while the editor shows the note; pasted text replaces it.
    assert metric.text_to_score(note, (note, kept)) == path.read_text(encoding="utf-8")
    assert metric.text_to_score('["Glioma"]', (note, kept)) == '["Glioma"]'
    small = tmp_path / "small.json"
    small.write_text('["Glioma"]', encoding="utf-8")
    assert metric.upload_to_editor(small, "small.json") == ('["Glioma"]', None)


def test_a_metric_upload_over_the_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as stream:
        stream.truncate(source.MAX_UPLOAD_BYTES + 1)
    with pytest.raises(NovaInputError, match="huge.jsonl: larger than"):
        metric.upload_to_editor(path, "huge.jsonl")


@pytest.mark.parametrize("depth", [33, 100_000])
def test_deeply_nested_pasted_json_is_refused_in_one_line(depth: int) -> None:
    text = "[" * depth + "]" * depth
    with pytest.raises(NovaInputError, match="nested deeper than 32 levels") as raised:
        metric.parse_items(text, "predictions")
    assert str(raised.value).startswith("predictions: ")
    lines = '{"boxes": [[1, 2, 3, 4]]}\n' + "[" * depth + "]" * depth
    with pytest.raises(NovaInputError, match=r"^predictions, line 2: nested deeper"):
        metric.parse_items(lines, "predictions")
    assert metric.parse_items("[" * 32 + "]" * 32, "predictions")  # the limit itself is read


def test_the_metric_space_message_shows_an_error_as_text() -> None:
    rows, message = metric.score_inputs(
        "/no/module", "![x](http://tracker.invalid/p.png)", "[]", metric.REFERENCES_PASTED, "[]"
    )
    assert rows == [] and message.startswith("**Could not score.**")
    assert "\\!\\[x\\]" in message and "![x]" not in message and not BARE_LINK.search(message)
