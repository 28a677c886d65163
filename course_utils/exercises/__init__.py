"""Exercise checkers, one module per notebook (nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10), all written
on `framework`: each prints one line, ✅ (right), ❌ (wrong, with a hint) or ✍ (not answered yet, without giving the
answer away), and returns True or False.
"""
