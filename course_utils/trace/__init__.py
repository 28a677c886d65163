"""trace: look inside a running model (imports core).

tracing        record every hooked tensor of a forward pass (Trace), one batched pass, patch hooks
interventions  the patches the course uses: uniform or first-token attention, an ablated head, a copied row
pretrained     the same traces for all-MiniLM-L6-v2
"""

# ---- re-exports: every public name of the layer, so that a notebook imports the layer, not its modules ----
from course_utils.trace.interventions import (
    ablate_head,
    copy_row_from,
    first_token_attention,
    last_token_attention,
    next_word_log_probs,
    uniform_attention,
)
from course_utils.trace.pretrained import ablate_heads, record_sentences, trace_sentence
from course_utils.trace.tracing import Trace, hook_points, patch, record, record_batch, record_forward, run_with_trace

__all__ = [
    "ablate_head",
    "ablate_heads",
    "copy_row_from",
    "first_token_attention",
    "hook_points",
    "last_token_attention",
    "next_word_log_probs",
    "patch",
    "record",
    "record_batch",
    "record_forward",
    "record_sentences",
    "run_with_trace",
    "Trace",
    "trace_sentence",
    "uniform_attention",
]
