"""Cut-offs and baselines: every threshold a verdict uses, fixed here before measuring, and how a verdict clears it.

    cut = CUTOFFS["practical_difference"]          # a Cutoff: name, value, direction, what it means, where used
    judge({0: 0.45, 1: 1.4, 3: 0.01}, cut)         # a Judgement: holds on 2/3 seeds, each seed's margin, borderline?
    beside_baseline(trained, untrained)            # a per-seed table: trained, untrained (same init, 0 epochs), gain
    BY_CONSTRUCTION                                 # the verdict word for a fact that holds for any weights of a shape
    seed_verdict({0: True, 1: True, 2: False})      # "seed-dependent (holds on 2/3 seeds: 0, 1)"
    seed_range([0.78, 0.86, 0.81])                  # "0.78–0.86"

A verdict about a trained model says how far each seed is from the cut-off (its margin). "Borderline" means weak: every
seed falls on one side, but some seed is within NEAR (a twentieth) of the measure's own scale of the cut-off, so
the effect is small for what the measure can show. Seeds that merely differ from one another do not make a verdict
borderline: five seeds that all clear the cut-off by a wide margin "hold", and the verdict prints their spread.
A fact that follows from the shapes alone (a rank, an identity of the algebra) is marked
BY_CONSTRUCTION instead of being counted over seeds: a seed count would suggest it could have come out otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

BY_CONSTRUCTION = "holds by construction"  # for any weights of this shape; no seed count

# A margin smaller than NEAR x the cut-off's scale is "close to the cut-off": a small effect for its measure.
NEAR = 0.05


@dataclass(frozen=True)
class Cutoff:
    """A threshold fixed before measuring: a value passes when it is above (direction ">") or below ("<") it.
    Used in notebooks 04-10 (every verdict that compares a number with a cut-off; listed in CUTOFFS), by judge."""

    name: str
    value: float
    direction: str  # ">": the claim holds when the value is above the cut-off; "<": when it is below
    meaning: str  # what passing means, in words
    scale: float = 1.0  # the measure's own size (1 for cosines, shares of weight, fractions): what "far" means

    def __post_init__(self):
        if self.direction not in (">", "<"):
            raise ValueError(f"a cut-off's direction is '>' or '<'; got {self.direction!r}")
        if not self.scale > 0:
            raise ValueError(f"a cut-off's scale is a positive size; got {self.scale!r}")

    @property
    def near(self) -> float:
        """How close to the cut-off a value is "close": NEAR x scale. Used by judge (the borderline rule)."""
        return NEAR * self.scale

    def margin(self, value: float) -> float:
        """How far `value` is on the passing side of the cut-off (negative: on the failing side).
        Used by judge (every verdict's printed margin)."""
        return float(value) - self.value if self.direction == ">" else self.value - float(value)

    def passes(self, value: float) -> bool:
        """Is `value` strictly on the passing side? Used by judge."""
        return self.margin(value) > 0

    def __str__(self) -> str:
        return f"{self.name} {self.direction} {self.value:g} ({self.meaning})"


def _cutoffs(*cuts: Cutoff) -> dict[str, Cutoff]:
    return {c.name: c for c in cuts}


# Every cut-off a verdict uses, in one place. Each was chosen before the measurement it judges.
# Soft or hard attention, for every notebook: a row (or a mean over rows) whose largest weight is above SOFT_HARD
# is a hard pick, one key takes almost everything; at or below it the row is soft, a blend of several values.
SOFT_HARD = 0.95

CUTOFFS: dict[str, Cutoff] = _cutoffs(
    # ---- every notebook that calls attention soft or a hard pick (03, 05, 09, 10) ----
    # a hard pick has only the room between SOFT_HARD and 1 to clear the cut-off: that room is its scale
    Cutoff("hard_pick", SOFT_HARD, ">", f"the largest row weight is above {SOFT_HARD}: a hard pick", 1 - SOFT_HARD),
    Cutoff("soft", SOFT_HARD, "<", f"the largest weight of an attention row is below {SOFT_HARD}: soft, a blend"),
    # ---- notebooks 02, 03 ----
    # 02 §2: do the words' queries end up more alike than a baseline (the inputs, the untrained W^Q)? any growth counts
    Cutoff("cosine_grows", 0.0, ">", "the mean |cosine| between different words grows"),
    # 03 F3: swapping W^Q and W^K is not a renaming if it changes the weights or x1 by more than half their size
    Cutoff("swap_changes", 0.5, ">", "changes by more than half"),
    # 03 B13: three separate maps W^Q, W^K, W^V fit better than one shared map: any training pair more counts
    Cutoff("separate_maps_fit_better", 0.0, ">", "three maps translate a larger share of the training pairs than one"),
    # 03 F3: a lookup of one's own record gives every query its own key as best; one query that does not refutes it
    Cutoff(
        "best_key_elsewhere", 0.0, ">", "some query matches best with another word's key", scale=6
    ),  # a count of a sentence's ~6 queries
    # ---- notebooks 04, 09 ----
    # B2 (04): training keeps a matrix's strong directions (a tenth: more would be a visible squeeze)
    # a share lost can clear the cut-off only by the room between 0 and 0.1: that room is its scale
    Cutoff("strong_directions_lost", 0.1, "<", "training squeezes under a tenth of a matrix's strong directions", 0.1),
    # F5 (04, 09), F1 (09): "slightly" vs "clearly" different: a fifth of the attention weight placed differently
    Cutoff("heads_differ", 0.2, ">", "the two heads place more than a fifth of their weight differently"),
    # F5 (04, 09), F1 (09): "different because of training": more different than the same init, 0 epochs
    Cutoff("more_than_at_init", 0.0, ">", "training adds to the difference the untrained model already has"),
    # F1 (09): a head "asks" for the aligned word when most of its weight goes there
    Cutoff("aligned_mass", 0.5, ">", "a cross-attention head puts most of its weight on the aligned English word"),
    # F8 (09): one "question" per head would send most query words to the same favourite key word
    Cutoff("one_question", 0.5, "<", "fewer than half of the query words share the head's most common favourite key"),
    # F9 (09): a head "specialises" if it writes into clearly fewer directions than at the start (a fifth fewer)
    Cutoff("specialised", 0.8, "<", "a head writes into under 4/5 of the directions it wrote into untrained"),
    # F9 (09): two heads write different things when their written tables are far from parallel (cosine under 1/2)
    Cutoff("heads_write_alike", 0.5, "<", "the two heads' written tables (centred) have a cosine below 0.5"),
    # B12 (09): the vector a head writes "fits" the word it reads if it is nearest to that word for most words
    Cutoff("writes_its_word", 0.5, ">", "for most words, what the head writes is nearest to the word itself"),
    # F10 (09, from 04's numbers): training moves a matrix away from its init by more than a tenth of its size
    Cutoff("moved_from_init", 0.1, ">", "training changes the matrix by more than a tenth of its size"),
    # F7 (04, 09): (a) the model needs a head: without it in every layer, under 60 % of training pairs stay right
    Cutoff("needs_the_head", 0.6, "<", "with one head zeroed in every layer, under 60 % of training pairs stay right"),
    # F7 (04, 09): (b) a general gain: the 2-head model gets more pairs right (train + held-out share) than 1 head
    Cutoff("heads_gain", 0.0, ">", "the 2-head model translates more pairs exactly than the 1-head model"),
    # ---- notebooks 05, 07 ----
    # 05 B10: "combines freely what varies": no unseen subject-object combination wrong (a count of 24; 0 passes)
    # a count of wrong pairs: its step is one pair, and the cut-off sits half a step above zero (scale 1)
    Cutoff("unseen_combinations_wrong", 0.5, "<", "no held-out subject-object combination translated wrongly"),
    # 05 B10: "treats what never varies as a rule": more than half of the 22 never-seen verb-object pairs rewritten
    Cutoff(
        "never_seen_rewritten", 11, ">", "more than half of the 22 never-seen verb-object pairs rewritten", scale=22
    ),
    # 07 B8 strict: "the same" = equal up to float64 noise; judged in orders of magnitude, log10(max|delta|) < -9
    Cutoff(
        "same_up_to_float_noise", -9.0, "<", "log10 of the largest difference below -9 (equal up to 1e-9)", scale=10
    ),
    # 07 B8 practical: "similar" = every vector nearer its counterpart than any other vector (cosine margin > 0)
    Cutoff("nearer_own", 0.0, ">", "each vector's cosine with its counterpart beats every other cosine in its row"),
    # 07 B8 attention: the strongest key stays the same word (weight margin over the next key > 0)
    Cutoff("same_strongest_key", 0.0, ">", "each query's strongest key is the same word in both orders"),
    # 07 B8 K, V "different overall": a word's own two vectors more alike than two words sharing a position
    Cutoff("different_overall", 0.0, ">", "same-word min cos minus the largest same-position cos is positive"),
    # ---- notebooks 06, 08 ----
    # B5: a word's vectors in two sentences differ "in practice" (also notebook 10)
    Cutoff("practical_difference", 0.1, ">", "differs by more than a tenth of its length"),
    # B5 clusters (06): the silhouette's usual reading, above 0.5 = clear clusters
    Cutoff("clear_clusters", 0.5, ">", "silhouette above 0.5: clear clusters"),
    # B6 (06): the decoder's cloud is wider in most (layer, kind) pairs: as before, at least 9 of 12 (= 5 of 6)
    Cutoff("most_pairs_wider", 0.7, ">", "wider in more than 70 % of the (layer, kind) pairs"),
    # B9 (08): a word "scatters" when its vectors across the sentences differ by cos below about 0.99; word spreads
    # (1 - cos) here lie between 0 and about 0.35, so their scale is 0.1: a spread of 0.1 (cos 0.9) is a clear scatter
    Cutoff("scatters", 0.01, ">", "word spread above 0.01 (cos below about 0.99)", scale=0.1),
    # B6, B9 (08): one spread minus another (same scale, 1 - cos): a ratio explodes where a spread is near 0
    Cutoff("spreads_more", 0.0, ">", "the first spread minus the second is positive", scale=0.1),
    # ---- notebook 10 ----
    # F4 (10): 04's threshold: a head's query gets more from position than from the word (ratio position/word > 1)
    Cutoff("position_over_word", 1.0, ">", "a head's query gets more from position than from the word"),
    # F4 (10): "mostly" one part: the larger part at least twice the other (two thirds of both); below, a mix
    Cutoff("clearly_one_part", 2.0, ">", "one part of a head's query is at least twice the other"),
    # B8 (10): "similar" for one word's two vectors: cosine above 0.9 (a looser reading than 07's nearer_own, which
    # asks a vector to be nearer its counterpart than any other word's; MiniLM's sentences have no fixed word set)
    Cutoff("similar_cosine", 0.9, ">", "cosine above 0.9: similar"),
    # F4, F7 (10): a difference beyond noise: over twice its bootstrap spread over the sentences (about 95 %)
    Cutoff("beyond_noise", 2.0, ">", "a difference exceeds twice its bootstrap spread over the sentences"),
    # F7 (10): it matters in practice: the drop exceeds how much the intact margin varies over resampled pair sets
    Cutoff(
        "drop_beyond_pair_sets", 1.0, ">", "the margin drops by more than it varies between resampled sets of pairs"
    ),
    # B8 (10): a reordered sentence is "nearly the same" when it is as close to it as the least close paraphrase
    Cutoff("as_close_as_a_paraphrase", 0.0, ">", "cosine with the reordered sentence minus the lowest paraphrase's"),
)


@dataclass(frozen=True)
class Judgement:
    """How a claim fares over the seeds against one cut-off: the per-seed values and margins, and the verdict.
    Used in notebooks 04-10 wherever a verdict compares a number with a cut-off (made by judge)."""

    cutoff: Cutoff
    values: dict
    margins: dict
    verdict: str  # "holds", "false", "seed-dependent" or "borderline"
    holds_on: tuple

    @property
    def spread(self) -> float:
        """The seed-to-seed spread of the values (max - min). Used by judge and the Judgement's text."""
        vals = list(self.values.values())
        return max(vals) - min(vals)

    def __str__(self) -> str:
        n, k = len(self.values), len(self.holds_on)
        cut = f"{self.cutoff.name} {self.cutoff.direction} {self.cutoff.value:g}"
        margins = list(self.margins.values())
        if 0 < k < n:  # seeds on both sides: which pass, and the range of the margins
            seeds = ", ".join(str(s) for s in self.holds_on)
            where = f"seeds {seeds}; margins {_signed(min(margins))} to {_signed(max(margins))}"
        elif k == n:  # every seed passes: by how little the weakest does
            where = f"smallest margin {_signed(min(margins))}"
        else:  # no seed passes: by how little the nearest one misses (0: on the cut-off, not a pass)
            where = f"closest miss {_signed(max(margins))}"
        if self.verdict == "borderline":
            where += f", within {self.cutoff.near:.3g} of the cut-off"
        return f"{self.verdict} ({k}/{n} seeds pass {cut}; {where}, seed spread {self.spread:.3g})"


def _signed(margin: float) -> str:
    """A margin with its sign, 3 significant digits; exactly on the cut-off: "0"."""
    return "0" if margin == 0 else f"{margin:+.3g}"


def judge(values: dict, cutoff: Cutoff) -> Judgement:
    """{seed: measured value} against a cut-off -> a Judgement.

    "seed-dependent": seeds on both sides of the cut-off;
    "borderline": every seed on one side, but some seed within `cutoff.near` (NEAR x the measure's scale) of it,
    a small effect; on the cut-off exactly is not a pass;
    "holds" / "false": every seed on the same side, each by more than `cutoff.near`, however much the seeds differ.
    Used in notebooks 02-09 wherever a verdict compares a number with a cut-off.
    """
    if not values:
        raise ValueError("judge needs at least one seed's value")
    if not isinstance(cutoff, Cutoff):
        raise TypeError(f"judge needs a Cutoff (see CUTOFFS); got {type(cutoff).__name__}")
    margins = {s: cutoff.margin(v) for s, v in values.items()}
    holds_on = tuple(s for s, m in margins.items() if m > 0)
    if 0 < len(holds_on) < len(values):
        verdict = "seed-dependent"
    elif min(abs(m) for m in margins.values()) < cutoff.near:
        verdict = "borderline"
    else:
        verdict = "holds" if holds_on else "false"
    return Judgement(cutoff, dict(values), margins, verdict, holds_on)


def beside_baseline(trained: dict, baseline: dict, name: str = "value", baseline_name: str = "untrained"):
    """Per-seed table of a measure after training beside its baseline (the same init before training, or chance),
    with the difference: the "learned" part is the difference, not the trained value.
    Used in notebooks 02, 04, 09 wherever a verdict says "learned" or "different" (beside the untrained model)."""
    if trained.keys() != baseline.keys():
        raise ValueError(f"trained and baseline need the same seeds; got {sorted(trained)} and {sorted(baseline)}")
    df = pd.DataFrame({name: pd.Series(trained), baseline_name: pd.Series(baseline)})
    df["difference"] = df[name] - df[baseline_name]
    df.index.name = "seed"
    return df


# ---- verdicts across seeds: a claim about a trained model holds only if it holds on every shipped seed ----


def seed_verdict(holds: dict[int, bool], what: str = "holds") -> str:
    """{seed: does the claim hold on that seed} -> "holds (5/5 seeds)", "false (5/5 seeds)" or
    "seed-dependent (holds on 3/5 seeds: 0, 1, 3)". `what` names the positive reading ("holds only weakly", ...).

    Used in notebooks 02-09 for every verdict over the five seeds (first in 02 §2).
    """
    if not holds:
        raise ValueError("seed_verdict needs at least one seed")
    n, k = len(holds), sum(bool(v) for v in holds.values())
    if k == n:
        return f"{what} ({n}/{n} seeds)"
    if k == 0:
        return f"false ({n}/{n} seeds)"
    return f"seed-dependent ({what} on {k}/{n} seeds: {', '.join(str(s) for s, v in holds.items() if v)})"


def seed_range(values, decimals: int = 2) -> str:
    """A spread over seeds as text: [0.78, 0.86, 0.81] -> "0.78–0.86" (one number if they all round alike).

    Used in notebooks 03-09 wherever a number is quoted over the five seeds (first in 03's Evidence part).
    """
    vals = [float(v) for v in (values.values() if isinstance(values, dict) else values)]
    lo, hi = f"{min(vals):.{decimals}f}", f"{max(vals):.{decimals}f}"
    return lo if lo == hi else f"{lo}–{hi}"
