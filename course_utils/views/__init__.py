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
widgets     thin ipywidgets wrappers that show a message instead of a traceback
clientside  views switched in the browser with no kernel, one file per view
"""

from course_utils.views.style import install_alt_hook

install_alt_hook()  # in IPython: every figure output carries its alt text (style.describe) in its metadata
