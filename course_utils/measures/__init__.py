"""measures: numbers computed from models and traces; nothing here draws (imports core, inspect, training).

similarity        every cosine and distance, once
sentence_vectors  01: dot products and the topic check on the toy sentence vectors
qkv               02: Q, K, V of a sentence, the three places' inputs
weight_maps       02, 09: W^Q as a bank of queries, W_QK and W_OV per head, vocabulary scores
attention_stats   03-05, 09: entropy, scale statistics, per-head statistics over the corpus
projection        06-08: labelled vectors from traces and the one shared projection (PCA, t-SNE)
clustering        06: how one word's vectors move between sentences and epochs
probing           07-08: word order and the five probe sentences
roles             09: word roles and cross-attention's aligned word
interventions     04, 06, 08, 09: patched models scored by exact match
pretrained        10: paraphrase cosines, head masses and ablations of MiniLM
tables            seed verdicts and ranges, styled cosine tables
verdicts          every cut-off in one place, margins, borderline verdicts, baselines beside trained values
"""
