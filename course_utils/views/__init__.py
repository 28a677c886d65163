"""views: everything that draws; the only layer that imports matplotlib, Altair or ipywidgets.

style       kind colours, sentence markers, figure layout, the one label placer
heatmaps    the one attention heatmap (plot_attention, show_heatmaps), the model view
vectors     01's sentence-vector figures
qkv         02's Q, K, V figures
scaling     03's scale figure
training    05's loss curve
clustering  06's word-path projections
probing     07-08's word-order and probe-sentence figures
heads       09-10's per-head figures
diagrams    the four schematics drawn in code
tables      colour-styled tables with fixed HTML: cosine_table (10), cosine_across (07)
widgets     thin ipywidgets wrappers that show a message instead of a traceback
clientside  views switched in the browser with no kernel, one file per view
"""

# ---- re-exports: every public name of the layer, so that a notebook imports the layer, not its modules ----
from course_utils.views.clientside.attention import attention_view
from course_utils.views.clientside.five import five_view
from course_utils.views.clientside.pair import pair_view
from course_utils.views.clientside.scaling import scaling_view
from course_utils.views.clientside.seed_attention import seed_attention_view
from course_utils.views.clientside.word_order import word_order_view
from course_utils.views.clientside.word_path import word_path_view
from course_utils.views.clientside.word_qkv import word_qkv_view
from course_utils.views.clustering import check_projection_choices, plot_context_distance, plot_word_projection
from course_utils.views.diagrams import draw_attention_path, draw_attention_places, draw_layer, draw_multi_head
from course_utils.views.heads import plot_head_grid, plot_roles, plot_vocab_scores_by_head
from course_utils.views.heatmaps import decoder_row_labels, heatmap, plot_attention, plot_model_view, show_heatmaps
from course_utils.views.probing import (
    DISTANCE_FLOOR,
    DISTANCE_LABEL,
    plot_five,
    plot_five_words,
    plot_same_word_distance,
    plot_word_order,
)
from course_utils.views.qkv import plot_singular_values, plot_word_qkv, plot_word_qkv_grid
from course_utils.views.scaling import plot_scaling
from course_utils.views.style import (
    KIND_COLOURS,
    alt_text,
    as_numpy,
    avoid_overlaps,
    describe,
    fixed_layout,
    install_alt_hook,  # called below: the alt-text hook
    with_alt,
)
from course_utils.views.tables import StyledTable, cosine_across, cosine_table
from course_utils.views.training import plot_loss
from course_utils.views.vectors import (
    TOPIC_COLOURS,
    colour_ticks,
    plot_pair,
    plot_sentence_vectors,
    plot_vectors_3d,
    topic_palette,
)
from course_utils.views.widgets import (
    CourseWidget,
    Message,
    controls_box,
    dropdown,
    figure_png,
    interactive_plot,
    render,
    show_message,
    slider,
)

__all__ = [
    "alt_text",
    "as_numpy",
    "attention_view",
    "avoid_overlaps",
    "check_projection_choices",
    "colour_ticks",
    "controls_box",
    "cosine_across",
    "cosine_table",
    "CourseWidget",
    "decoder_row_labels",
    "describe",
    "DISTANCE_FLOOR",
    "DISTANCE_LABEL",
    "draw_attention_path",
    "draw_attention_places",
    "draw_layer",
    "draw_multi_head",
    "dropdown",
    "figure_png",
    "five_view",
    "fixed_layout",
    "heatmap",
    "interactive_plot",
    "KIND_COLOURS",
    "Message",
    "pair_view",
    "plot_attention",
    "plot_context_distance",
    "plot_five",
    "plot_five_words",
    "plot_head_grid",
    "plot_loss",
    "plot_model_view",
    "plot_pair",
    "plot_roles",
    "plot_same_word_distance",
    "plot_scaling",
    "plot_sentence_vectors",
    "plot_singular_values",
    "plot_vectors_3d",
    "plot_vocab_scores_by_head",
    "plot_word_order",
    "plot_word_projection",
    "plot_word_qkv",
    "plot_word_qkv_grid",
    "render",
    "scaling_view",
    "seed_attention_view",
    "show_heatmaps",
    "show_message",
    "slider",
    "StyledTable",
    "TOPIC_COLOURS",
    "topic_palette",
    "with_alt",
    "word_order_view",
    "word_path_view",
    "word_qkv_view",
]

install_alt_hook()  # in IPython: every figure output carries its alt text (style.describe) in its metadata
