"""trace: look inside a running model (imports core).

tracing        record every hooked tensor of a forward pass (Trace), one batched pass, patch hooks
interventions  the patches the course uses: uniform or first-token attention, an ablated head, a copied row
pretrained     the same traces for all-MiniLM-L6-v2
"""
