"""course_utils.measures.verdicts: cut-offs, margins, borderline verdicts and baselines."""

import pytest

from course_utils.measures.verdicts import CUTOFFS, Cutoff, beside_baseline, judge


def test_every_cutoff_is_named_by_its_key_and_says_what_it_means():
    for key, cut in CUTOFFS.items():
        assert cut.name == key and cut.meaning and cut.direction in (">", "<")


def test_judge_holds_false_seed_dependent_and_borderline():
    cut = Cutoff("c", 0.1, ">", "above a tenth")  # scale 1: "near" is within 0.05 of the cut-off
    assert judge({0: 0.5, 1: 0.55}, cut).verdict == "holds"
    assert judge({0: 0.0, 1: 0.04}, cut).verdict == "false"  # both miss, the nearer by 0.06 > 0.05
    dep = judge({0: 0.5, 1: 0.01, 2: 0.3}, cut)
    assert dep.verdict == "seed-dependent" and dep.holds_on == (0, 2)
    near = judge({0: 0.12, 1: 0.9}, cut)  # passes on both, but seed 0 only by 0.02: a small effect
    assert near.verdict == "borderline" and near.margins[0] == pytest.approx(0.02)
    assert "smallest margin +0.02, within 0.05 of the cut-off" in str(near) and "seed spread 0.78" in str(near)
    assert str(dep) == ("seed-dependent (2/3 seeds pass c > 0.1; seeds 0, 2; margins -0.09 to +0.4, seed spread 0.49)")
    miss = judge({0: 0.1, 1: 0.0}, cut)  # seed 0 sits on the cut-off: not a pass, and printed as 0, not +0
    assert miss.verdict == "borderline" and miss.holds_on == ()
    assert "0/2 seeds pass" in str(miss) and "closest miss 0," in str(miss)


def test_seeds_that_differ_but_all_clear_the_cut_off_widely_hold():
    """The old rule called this borderline (smallest margin 0.15 < seed spread 0.2); a large effect is not weak."""
    cut = Cutoff("clusters", 0.5, ">", "silhouette above 0.5")
    j = judge({0: 0.65, 1: 0.85, 2: 0.7, 3: 0.8, 4: 0.75}, cut)
    assert j.verdict == "holds" and j.spread == pytest.approx(0.2)
    assert str(j) == "holds (5/5 seeds pass clusters > 0.5; smallest margin +0.15, seed spread 0.2)"
    assert judge({0: 0.0, 1: 0.3}, cut).verdict == "false"  # both far below, whatever their spread


def test_near_is_measured_on_the_cut_offs_own_scale():
    count = Cutoff("rewritten", 11, ">", "more than half of 22", scale=22)  # near: within 1.1
    assert count.near == pytest.approx(1.1)
    assert judge({0: 12, 1: 19}, count).verdict == "borderline"  # seed 0 clears by one pair of 22
    assert judge({0: 13, 1: 19}, count).verdict == "holds"
    spread = Cutoff("scatters", 0.01, ">", "spread above 0.01", scale=0.1)  # near: within 0.005
    assert judge({0: 0.02, 1: 0.3}, spread).verdict == "holds"
    assert judge({0: 0.012, 1: 0.3}, spread).verdict == "borderline"
    with pytest.raises(ValueError, match="scale"):
        Cutoff("x", 1, ">", "", scale=0)


def _old_rule(values, cutoff):
    """A broken copy of judge: the rule this course used before, borderline whenever the seeds' spread exceeds the
    smallest margin. The tests above must reject it."""
    margins = {s: cutoff.margin(v) for s, v in values.items()}
    holds = tuple(s for s, m in margins.items() if m > 0)
    vals = list(values.values())
    if 0 < len(holds) < len(values):
        return "seed-dependent"
    if min(abs(m) for m in margins.values()) < max(vals) - min(vals):
        return "borderline"
    return "holds" if holds else "false"


def _no_near_rule(values, cutoff):
    """A broken copy that never says borderline: a pass by any margin holds."""
    holds = [s for s, v in values.items() if cutoff.margin(v) > 0]
    return "seed-dependent" if 0 < len(holds) < len(values) else ("holds" if holds else "false")


@pytest.mark.parametrize("broken", [_old_rule, _no_near_rule])
def test_the_borderline_cases_above_reject_broken_copies_of_the_rule(broken):
    clusters = Cutoff("clusters", 0.5, ">", "silhouette above 0.5")
    count = Cutoff("rewritten", 11, ">", "more than half of 22", scale=22)
    cases = [  # (values, cut-off, the verdict judge gives)
        ({0: 0.65, 1: 0.85, 2: 0.7}, clusters, "holds"),
        ({0: 12, 1: 19}, count, "borderline"),
        ({0: 0.52, 1: 0.53}, clusters, "borderline"),
    ]
    for values, cut, want in cases:
        assert judge(values, cut).verdict == want
    assert any(broken(values, cut) != want for values, cut, want in cases)


def test_a_below_cutoff_counts_margins_the_other_way():
    cut = Cutoff("soft", 0.9, "<", "row max below 0.9")
    j = judge({0: 0.5, 1: 0.6}, cut)
    assert j.verdict == "holds" and j.margins[0] == pytest.approx(0.4)


def test_bad_input_is_refused_in_words():
    with pytest.raises(ValueError, match="direction"):
        Cutoff("x", 1, ">=", "")
    with pytest.raises(ValueError, match="at least one seed"):
        judge({}, CUTOFFS["practical_difference"])
    with pytest.raises(TypeError, match="Cutoff"):
        judge({0: 1.0}, 0.1)
    with pytest.raises(ValueError, match="same seeds"):
        beside_baseline({0: 1.0}, {1: 0.5})


def test_beside_baseline_shows_the_difference_per_seed():
    df = beside_baseline({0: 0.25, 1: 0.12}, {0: 0.14, 1: 0.14}, name="mean |cos|")
    assert list(df.columns) == ["mean |cos|", "untrained", "difference"]
    assert df.loc[0, "difference"] == pytest.approx(0.11) and df.loc[1, "difference"] == pytest.approx(-0.02)


def test_soft_and_hard_are_one_cut_off_read_both_ways():
    soft, hard = CUTOFFS["soft"], CUTOFFS["hard_pick"]
    assert soft.value == hard.value and (soft.direction, hard.direction) == ("<", ">")
    assert soft.passes(0.9) and not hard.passes(0.9) and hard.passes(0.99) and not soft.passes(0.99)
