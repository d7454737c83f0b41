"""A leaderboard of several reports on one release: headline numbers, CIs, ranks with ties.

Each task is ranked on one metric whose value is a mean over items, so the per-item tables
(``report["items"]``, written by ``nova evaluate --items``) can resample it:

- localisation: ``mAP@30`` (image hit: best IoU >= 0.30, over all images);
- captioning: ``ROUGE-L`` (the per-caption column);
- diagnosis: Top-1 (over the cases with a final diagnosis) under the key the reports hold:
  ``top1`` (the case judge, the paper's), ``top1-lexicon`` or ``top1-pairwise``.

Reports holding different readings of a task's ranking metric (one judged ``top1``, others
``top1-lexicon``) hold different quantities: that task is not ranked, each value is shown
under its own key (the overview gets a column per reading held), and its ranking says which
reports hold which reading and how to score them alike; the other tasks are ranked as usual.
The JSON says it per task: ``ranking[task]["ranked"]`` is false, ``"reason"`` the sentence,
``"readings"`` ``{key: [report, ...]}``.

Old reports are read with today's keys (:func:`novabench.report.render.with_current_keys`:
an old lexicon ``top1`` is ranked as ``top1-lexicon``, never as the paper's Top-1).

Values are checked where a report enters the board: each headline value is null or a finite
fraction in [0, 1], its CI two finite fractions, low <= high (a value outside its CI is
shown: a percentile CI of a statistic that is no mean can miss it); two reports of one
evaluation (same run id or same pinned tables: a copied report) are refused, naming both. A
report with per-item tables must hold, in them, the reading of each ranking metric it states
(the cases table's ``top1-lexicon`` never backs a stated ``top1``), and its stated value must
equal the value the task's module recomputes from them as the ranking resamples it
(``TaskBehaviour.rank_value``, up to float rounding); anything else is refused in one line
naming the report, the key and both values. So is every other headline key the tables can
recompute as a ratio of sums over items (``TaskBehaviour.item_mean_terms``: mAP@30/50,
mAP@50:95, hit@30/50, top1/top5 of any reading, ROUGE-L, METEOR, BERTScore-F1, BinaryF1 of
either reading,
and ClinicalF1/ModalityF1 of either reading: sample keyword averaging from the per-caption
F1s, micro from the per-caption counts), and its stated CI too: it must be the interval
``nova evaluate`` drew from those items with the report's own bootstrap settings
(resamples, confidence, seed, and unit: whole cases by the tables' ``case_id``, or single
images for a report without ``bootstrap.unit``), which the same bootstrap of the tables
gives again, to float
rounding; else one line naming the report, the key and both intervals. The keys no ratio
of per-item sums gives are scored again from the tables' own columns by the task's metric
(``TaskBehaviour.table_rescoring``): COCO-AP@30/50/50:95, ACC50, TP30, FP30 and FNR from
each scored image's predicted boxes, scores and gold boxes (``[x1, y1, x2, y2]``, scored in
that form), BLEU-4 from the two captions; value and CI (the same bootstrap, the same
settings) must be the report's, to float rounding, else one line as above. The keys the
tables cannot recompute (those, in tables written without the scores or the predicted
captions; micro-averaged keyword F1s of tables without counts) and every value and CI of
a report without tables are taken as stated: named in the warnings before the tables and each marked † under the key the
board shows (the CSV's ``verified`` names them per row).

Every value and CI is shown in percent; the header names the CI level most reports share,
and a cell whose CI has another level says its own ("(50% CI)"); the CSV gives each row's
``ci_level (%)`` and ``ci_resamples``. A rank set by a value taken as stated is marked † too.
The raters' rows (the first report holding a human reference) are checked where the images
table can: rater-vs-gold mAP@30/50 and mAP@50:95 from ``rater_*_best_iou``, value and CI;
their other values are marked †. The re-scored keys and the raters' rows are redrawn with
the same unit as the rest.

Models are ordered by the report's value of that metric; two neighbours share a rank when a
paired bootstrap of their difference (the same cases drawn for both, every image of each,
as ``nova compare``) has an interval containing 0. Ties chain: if A ties B and B ties C, all three share A's
rank. Without per-item tables for every report, ranks follow the point estimates and the
leaderboard says ties cannot be assessed. A task only one model has is not ranked (rank
None, no tie statement).

Scores are only comparable when the reports were scored with the same metric settings.
Each report records them (:data:`SCORING_SETTINGS`: the BERTScore model hash, the METEOR
variant, the keyword extractor and averaging, the diagnosis matcher or judge, whether only
answered items were scored); where a setting differs between reports (a report without it
counts as "unknown"), the metrics it affects are marked "settings differ" and a task whose
ranking metric is affected is not ranked. One sentence per difference names the setting and
the reports, in every output. Differing bootstrap settings (resamples, confidence, seed, or
unit: whole cases, or single images in reports written before cases were resampled) only
make the CIs differ: noted.
The rule for marks: every metric a differing setting affects is marked (METEOR of one report
beside METEOR-exact+stem of another: both keys, the variant differs), except for a task's
``reading_settings`` (the diagnosis matcher), whose value decides which keys a report holds:
reports of different readings are already told apart by their keys and left unranked, so a
key is marked only when the reports holding that key differ (two lexicon reports of one
matcher beside a judged report: ``top1-lexicon`` is not marked).

Warned about before any table, in every output (``board["warnings"]`` in the JSON): the
synthetic sample, stand-ins shown in place of the paper's keys (``top1-lexicon``...,
``METEOR-exact+stem`` where WordNet was missing), and each report that answered only part of
a task's items (answered/total, missing scored as misses or left out with
``--answered-only``, as its coverage records); the notes keep the rest.

Shown as an overview (per model, each task's ranking metric and rank; "not ranked" where the
task is left unranked) and one table per task with its headline keys (Markdown, terminal,
HTML); the CSV is one wide table whose titles are task, key and unit only, whatever the board
holds, with a note column per task last (what it was ranked on, keys whose settings differ).
The published figures of a paper key are marked not comparable wherever the board holds a
stand-in of it, even beside a report holding the key itself. JSON neighbours name their
reports (``a_report``, ``b_report``) as well as their models.
"""

from __future__ import annotations

# The package's modules, one job each (bottom to top; each imports only those before it):
# settings (what the task modules declare; where reports' settings differ), values (a
# report's headline values, refused where unusable), recomputed (values and CIs checked
# against per-item tables), comparable (whether reports may share a board), ranking (ranks
# with ties), coverage (how much each report answered), build (build_leaderboard), then the
# rendering: cells (one cell or title), tables (header and rows), formats (Markdown, text,
# HTML, CSV). Every name below stays importable from novabench.report.leaderboard: those
# outside __all__ (the marks the tables write; helpers tests import here) under noqa.
from novabench.report.items import read_item_tables
from novabench.report.leaderboard.build import build_leaderboard
from novabench.report.leaderboard.cells import NOT_RANKED  # noqa: F401
from novabench.report.leaderboard.formats import (
    curve_note,
    curve_tables,
    leaderboard_csv,
    render_leaderboard_html,
    render_leaderboard_markdown,
    render_leaderboard_text,
)
from novabench.report.leaderboard.ranking import _separable  # noqa: F401
from novabench.report.leaderboard.recomputed import UNVERIFIED_MARK  # noqa: F401
from novabench.report.leaderboard.settings import (  # noqa: F401
    RANK_METRICS,
    SCORING_SETTINGS,
    _bootstrap_note,
    _setting_differences,
)

__all__ = [
    "RANK_METRICS",
    "SCORING_SETTINGS",
    "build_leaderboard",
    "curve_note",
    "curve_tables",
    "leaderboard_csv",
    "read_item_tables",
    "render_leaderboard_html",
    "render_leaderboard_markdown",
    "render_leaderboard_text",
]
