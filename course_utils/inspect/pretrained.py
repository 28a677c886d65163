"""TODO inspect.pretrained"""

from __future__ import annotations

import torch  # noqa: E402

from course_utils.core.pretrained import Encoded, MiniLM
from course_utils.inspect.tracing import Trace, record

# ------------------------------------------------------------------------------------------- tracing


@torch.no_grad()
def record_sentences(model: MiniLM, sentences, names=None) -> tuple[dict[str, torch.Tensor], Encoded]:
    """One padded forward pass of many sentences, recording hooked tensors (batch dim in front)."""
    batch = model._batch(sentences)
    with record(model, names) as cache:
        model(batch.ids, batch.token_types, batch.mask)
    return dict(cache), batch


@torch.no_grad()
def trace_sentence(model: MiniLM, sentence: str, names=None) -> Trace:
    """Trace one sentence: a tracing.Trace whose src_tokens are its WordPiece tokens ([CLS] … [SEP])."""
    cache, batch = record_sentences(model, [sentence], names)
    return Trace(batch.tokens[0], [], [], {k: v[0] for k, v in cache.items()})
