"""training: train the translator and keep the results (imports core and inspect).

train  the deterministic training loop with epoch snapshots, exact match
files  save and load a trained model without pickle
zoo    the standard models (kinds x seeds) shipped in models/, retrained on demand
"""
