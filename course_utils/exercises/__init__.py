"""Exercise checkers, one module per notebook (nb01 ... nb09).

Every checker returns True for a right answer and False for a wrong one, and prints one line of
feedback; `tests/` checks that wrong answers are rejected.
"""

from __future__ import annotations


def feedback(ok: bool, success: str, hint: str) -> bool:
    """Print ✅ success or ❌ hint and return ok."""
    print(("✅ " + success) if ok else ("❌ Not yet: " + hint))
    return bool(ok)
