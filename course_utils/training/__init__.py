"""training: train the translator and keep the results (imports core and trace).

train  the deterministic training loop with epoch snapshots, exact match
files  save a trained model as plain tensors and values (a torch.save archive), load it with weights_only=True
zoo    the standard models (kinds x seeds) shipped in course_utils/models/, retrained on demand
"""
