"""course_utils.measures.verdicts: cut-offs, margins, borderline verdicts and baselines."""

import pytest

from course_utils.measures.verdicts import CUTOFFS, Cutoff, beside_baseline, judge


def test_every_cutoff_is_named_by_its_key_and_says_what_it_means():
    for key, cut in CUTOFFS.items():
        assert cut.name == key and cut.meaning and cut.direction in (">", "<")


def test_judge_holds_false_seed_dependent_and_borderline():
    cut = Cutoff("c", 0.1, ">", "above a tenth")
    assert judge({0: 0.5, 1: 0.55}, cut).verdict == "holds"  # margins 0.4, 0.45 >= spread 0.05
    assert judge({0: 0.0, 1: 0.05}, cut).verdict == "false"  # margins -0.1, -0.05: smallest 0.05 >= spread 0.05
    dep = judge({0: 0.5, 1: 0.01, 2: 0.3}, cut)
    assert dep.verdict == "seed-dependent" and dep.holds_on == (0, 2)
    near = judge({0: 0.12, 1: 0.9}, cut)  # passes on both, but seed 0 is 0.02 from the cut-off, the seeds 0.78 apart
    assert near.verdict == "borderline" and near.margins[0] == pytest.approx(0.02)
    assert "smallest margin +0.02" in str(near) and "seed spread 0.78" in str(near)
    assert str(dep) == ("seed-dependent (2/3 seeds pass c > 0.1; seeds 0, 2; margins -0.09 to +0.4, seed spread 0.49)")
    miss = judge({0: 0.1, 1: 0.0}, cut)  # seed 0 sits on the cut-off: not a pass, and printed as 0, not +0
    assert miss.verdict == "borderline" and miss.holds_on == ()
    assert "0/2 seeds pass" in str(miss) and "closest miss 0," in str(miss)


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
