"""core: what the course model is made of; imports nothing else of course_utils.

errors      the course's error types (every message worded for a learner)
precision   the one dtype (float64) and `below` for values that are zero in exact arithmetic
data        the English->German corpus in data/, vocabularies, tokenisation
toys        the hand-made examples: 2-D sentence vectors (01), the toy W^Q (02), toy word vectors (03)
places      the one vocabulary: attention places, vector kinds, trace keys
attention   scaled dot-product and multi-head attention, from scratch, with hook points
model       the encoder-decoder translator, initialised as the blog's code does, and greedy translation
pretrained  all-MiniLM-L6-v2 built from the same attention, loaded offline
"""
