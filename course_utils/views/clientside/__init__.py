"""clientside: views whose every choice is embedded once and switched in the browser (Vega-Lite via Altair).

base            the display protocol (two outputs), the embedded data, the controls
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
