"""clientside: views whose every choice is embedded once and switched in the browser (Vega-Lite via Altair).

base            the display protocol: the two outputs of a view (ClientSideView), chart_view
loader          the script in output 2 that loads the Vega files (next to an exported page; the CDN only where
                they are missing) and draws the view
tsv             the embedded data: rows as one TSV string, labels that sort by position
controls        the Vega-Lite params bound to radio buttons or a select
heatmap         any word-labelled heatmap with finite choices
attention       04, 09, 10: attention heatmaps per sentence, place, layer and head
seed_attention  05: the same across seeds
pair            01: two sentence vectors
word_qkv        02: one word's q, k, v
scaling         03: the scale slider
word_path       06: a word's path over the epochs
word_order      07: word order against positional encoding
five            08: the five probe sentences
"""

# ---- re-exports: every public name of the layer, so that a notebook imports the layer, not its modules ----
from course_utils.views.clientside.attention import attention_heatmaps, attention_view, checked_places, choices_text
from course_utils.views.clientside.base import ClientSideView, chart_view, spec_json, view_html, view_id
from course_utils.views.clientside.controls import control_params
from course_utils.views.clientside.five import five_view
from course_utils.views.clientside.heatmap import embedded_value, heatmap_view
from course_utils.views.clientside.loader import loader_script
from course_utils.views.clientside.pair import pair_view
from course_utils.views.clientside.scaling import scaling_view
from course_utils.views.clientside.seed_attention import seed_attention_view
from course_utils.views.clientside.tsv import label_key, rows_tsv
from course_utils.views.clientside.word_order import word_order_view
from course_utils.views.clientside.word_path import word_path_view
from course_utils.views.clientside.word_qkv import word_qkv_view

__all__ = [
    "attention_heatmaps",
    "attention_view",
    "chart_view",
    "checked_places",
    "choices_text",
    "ClientSideView",
    "control_params",
    "embedded_value",
    "five_view",
    "heatmap_view",
    "label_key",
    "loader_script",
    "pair_view",
    "rows_tsv",
    "scaling_view",
    "seed_attention_view",
    "spec_json",
    "view_html",
    "view_id",
    "word_order_view",
    "word_path_view",
    "word_qkv_view",
]
