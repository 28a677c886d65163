"""Exercise checkers, one module per notebook: nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10.

Every checker returns True for a right answer and False for a wrong one, and prints one line of feedback:
✅ (right), ❌ (wrong, with a hint) or ✍ (not answered yet: the state the committed notebooks show, without giving
the answer away). `framework` holds the one way a checker is written: an `Exercise` spec (cases, reference, typical
mistakes and their hints, names refused by one static check `uses`), `check_true_false`, `check_choice`, and the
line printers `feedback` and `not_answered`; they are re-exported here.
"""

from __future__ import annotations

from course_utils.exercises.framework import (  # noqa: F401 - re-exported: the checkers import them from here
    NOT_ANSWERED,
    NOT_YET,
    Exercise,
    Mistake,
    check_choice,
    check_true_false,
    feedback,
    not_answered,
)
