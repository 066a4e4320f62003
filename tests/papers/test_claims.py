"""Claim checks (ssvmbench.papers.claims) on hand-made curves whose answers are known."""

import numpy as np
import pandas as pd
import pytest

from ssvmbench.common.errors import UserError
from ssvmbench.papers.claims import describe, evaluate, validate

PASSES = np.array([0.5, 1, 2, 5, 10, 20, 50, 100])


def curves(panels):
    """An aggregate() table: ``panels`` maps a regularization to ``{method: (passes,
    values)}``."""
    rows = [{"data": "ocr", "data_variant": "v", "regularization": reg, "method": method,
             "effective_pass": x, "median": y}
            for reg, methods in panels.items() for method, (xs, ys) in methods.items()
            for x, y in zip(xs, ys)]
    return pd.DataFrame(rows)


def below(lower, upper, **options):
    check = {"kind": "below", "y": "suboptimality", "lower": lower, "upper": upper, **options}
    validate(check, "test")
    return check


def test_below_counts_every_checkpoint_and_the_factor():
    stats = curves({0.01: {"fast": (PASSES, 1 / PASSES), "slow": (PASSES, 10 / PASSES)}})
    verdict = evaluate(below(["fast"], ["slow"], factor=5), stats)
    assert verdict.holds and verdict.detail == "8 of 8 checkpoints; smallest ratio upper/lower 10"
    assert not evaluate(below(["fast"], ["slow"], factor=20), stats).holds
    assert not evaluate(below(["slow"], ["fast"]), stats).holds


def test_pass_range_fraction_and_last_checkpoint():
    # "cross" is above "base" up to pass 2, below from pass 5 on
    cross = np.where(PASSES <= 2, 2.0, 0.5)
    stats = curves({1: {"base": (PASSES, np.ones(8)), "cross": (PASSES, cross)}})
    assert evaluate(below(["cross"], ["base"], passes=[5, None]), stats).holds
    verdict = evaluate(below(["cross"], ["base"], passes=[1, 100]), stats)
    assert not verdict.holds and verdict.detail.startswith("5 of 7 checkpoints")
    assert evaluate(below(["cross"], ["base"], passes=[1, 100], fraction=0.7), stats).holds
    assert not evaluate(below(["cross"], ["base"], passes=[1, 100], fraction=0.75), stats).holds
    assert evaluate(below(["cross"], ["base"], passes="last"), stats).detail.startswith("1 of 1")


def test_the_other_curve_is_interpolated_in_log_passes_within_its_range():
    # upper known at 1 and 100 passes only: log-linear, 2 at pass 10; lower constant 1.9
    stats = curves({1: {"low": (PASSES, np.full(8, 1.9)), "up": ([1, 100], [1.0, 3.0])}})
    verdict = evaluate(below(["low"], ["up"], passes=[10, 10]), stats)
    assert verdict.holds
    assert verdict.detail == "1 of 1 checkpoints; smallest ratio upper/lower 1.05"
    # pass 0.5 lies outside the upper curve's range: 7 compared, 4 of them (10-100) hold
    assert evaluate(below(["low"], ["up"]), stats).detail.startswith("4 of 7")


def test_panel_choice_by_regularization():
    fast, slow = (PASSES, 1 / PASSES), (PASSES, 10 / PASSES)
    stats = curves({0.01: {"a": fast, "b": slow}, 0.001: {"a": slow, "b": fast}})
    assert evaluate(below(["a"], ["b"], panel="largest"), stats).holds
    assert not evaluate(below(["a"], ["b"], panel="smallest"), stats).holds
    assert evaluate(below(["a"], ["b"]), stats).detail.startswith("8 of 16")


def test_close_by_ratio_and_by_difference():
    stats = curves({1: {"a": (PASSES, np.full(8, 1.0)), "b": (PASSES, np.full(8, 1.5)),
                        "c": (PASSES, np.full(8, 1.2))}})
    check = {"kind": "close", "y": "test_error", "curves": ["a", "b", "c"], "factor": 1.6}
    validate(check, "test")
    verdict = evaluate(check, stats)
    assert verdict.holds and verdict.detail == "24 of 24 checkpoints; largest ratio 1.5"
    assert not evaluate({**check, "factor": 1.4}, stats).holds
    by_difference = {"kind": "close", "y": "test_error", "curves": ["a", "c"], "tolerance": 0.25}
    assert evaluate(by_difference, stats).holds
    assert not evaluate({**by_difference, "tolerance": 0.1}, stats).holds


def test_missing_curves_and_empty_ranges_are_not_applicable():
    stats = curves({1: {"a": (PASSES, np.ones(8))}})
    verdict = evaluate(below(["a"], ["ghost"]), stats)
    assert verdict.holds is None and verdict.word == "n/a" and "ghost" in verdict.detail
    stats = curves({1: {"a": (PASSES, np.ones(8)), "b": (PASSES, np.ones(8))}})
    assert evaluate(below(["a"], ["b"], passes=[200, None]), stats).holds is None


@pytest.mark.parametrize("check, message", [
    ({"kind": "above", "y": "primal"}, "check kind"),
    ({"kind": "below", "y": "primal", "lower": ["a"]}, "needs y and"),
    ({"kind": "below", "y": "primal", "lower": ["a"], "upper": ["b"], "colour": 1}, "colour"),
    ({"kind": "below", "y": "primal", "lower": ["a"], "upper": ["b"], "panel": "middle"},
     "panel"),
    ({"kind": "below", "y": "primal", "lower": ["a"], "upper": ["b"], "passes": [1]}, "passes"),
    ({"kind": "close", "y": "primal", "curves": ["a", "b"]}, "exactly one"),
    ({"kind": "paper", "y": "test_accuracy", "curve": "a", "value": 0.9}, "tolerance"),
    ({"kind": "close", "y": "primal", "curves": ["a", "b"], "factor": 2, "at": "worst"}, "at"),
])
def test_malformed_checks_are_refused(check, message):
    with pytest.raises(UserError, match=message):
        validate(check, "preset.yaml")


def test_description_says_what_is_compared():
    assert describe(below(["bcfw"], ["ssg", "fw"], factor=2, panel="largest", passes=[1, 30])) \
        == ("bcfw >= 2x below ssg, fw in suboptimality, passes 1-30 (every checkpoint), "
            "largest-regularization panel")
    assert describe({"kind": "close", "y": "primal", "curves": ["a", "b"], "factor": 1.1,
                     "passes": "last"}) == ("a, b within a factor 1.1 of each other in primal, "
                                            "at the last checkpoint, every panel")


def test_best_within_the_pass_range_and_the_papers_number():
    """SAP's tables: each curve's best accuracy within the first passes, compared with each
    other (at: best) or with the number the paper prints (kind: paper)."""
    rising = np.array([0.5, 0.8, 0.9, 0.95, 0.96, 0.90, 0.85, 0.80])   # best 0.96 at pass 10
    stats = curves({1: {"sap": (PASSES, rising), "l2": (PASSES, np.full(8, 0.955))}})
    stats["median"] = stats["median"].astype(float)
    close = {"kind": "close", "y": "test_accuracy", "curves": ["sap", "l2"], "tolerance": 0.01}
    assert not evaluate({**close, "passes": "last"}, stats).holds       # 0.80 vs 0.955
    best = {**close, "at": "best", "passes": [0, 50]}
    validate(best, "test")
    verdict = evaluate(best, stats)
    assert verdict.holds and verdict.detail == "1 of 1 panels; largest difference 0.005"
    paper = {"kind": "paper", "y": "test_accuracy", "curve": "sap", "value": 0.945,
             "tolerance": 0.005, "at": "best", "passes": [0, 50]}
    validate(paper, "test")
    verdict = evaluate(paper, stats)
    assert not verdict.holds and verdict.word == "not reproduced"
    assert verdict.detail == "0 of 1 panels; ours minus the paper's 0.015"
    assert evaluate({**paper, "tolerance": 0.02}, stats).word == "reproduced"
    assert evaluate({**paper, "at": "every", "passes": "last"}, stats).detail.endswith("-0.145")
    assert describe(paper) == ("sap within 0.005 of the paper's 0.945 in test_accuracy, best "
                               "value of passes 0-50, every panel")


def test_data_and_C_select_panels_and_deviations_make_a_check_not_comparable():
    n = 1000
    stats = curves({1 / (0.1 * n): {"a": (PASSES, np.ones(8)), "b": (PASSES, np.full(8, 2.0))},
                    1 / (10 * n): {"a": (PASSES, np.full(8, 3.0)), "b": (PASSES, np.ones(8))}})
    stats["n"] = n
    assert evaluate(below(["a"], ["b"], C=0.1), stats).holds
    assert not evaluate(below(["a"], ["b"], C=10), stats).holds
    assert evaluate(below(["a"], ["b"], C=1), stats).holds is None       # no such panel
    assert evaluate(below(["a"], ["b"], C=0.1, data="pos"), stats).holds is None
    verdict = evaluate(below(["a"], ["b"], C=10, not_comparable="data"), stats)
    assert not verdict.holds and verdict.word == "not comparable here"


def test_pairs_are_compared_where_both_curves_exist():
    """SGD's curve name carries its step size, which the paper sets per lambda: a check
    naming both compares each where it exists; a curve found in no panel is still n/a."""
    stats = curves({0.01: {"a": (PASSES, np.ones(8)), "sgd-0.02": (PASSES, np.full(8, 2.0))},
                    0.001: {"a": (PASSES, np.ones(8)), "sgd-0.04": (PASSES, np.full(8, 3.0))}})
    verdict = evaluate(below(["a"], ["sgd-0.02", "sgd-0.04"]), stats)
    assert verdict.holds and verdict.detail.startswith("16 of 16")
    assert evaluate(below(["a"], ["sgd-0.02", "sgd-0.4"]), stats).holds is None


def test_expect_false_checks_that_the_comparison_fails():
    stats = curves({1: {"a": (PASSES, np.full(8, 1.0)), "b": (PASSES, np.full(8, 1.5))}})
    robust = {"kind": "close", "y": "primal", "curves": ["a", "b"], "factor": 1.1,
              "passes": "last"}
    sensitive = {**robust, "expect": False}
    validate(sensitive, "test")
    assert not evaluate(robust, stats).holds and evaluate(sensitive, stats).holds
    assert describe(sensitive).startswith("NOT (a, b within a factor 1.1")


def test_each_pair_must_meet_the_fraction_on_its_own():
    """Issue 32, BCFW Figure 3: raw BCFW above BCFW-wavg everywhere but below five others
    passed a pooled 50 %; counted per pair it fails, naming the weakest pair."""
    stats = curves({1: {"bcfw": (PASSES, np.full(8, 2.0)), "wavg": (PASSES, np.ones(8)),
                        **{f"ssg{i}": (PASSES, np.full(8, 3.0)) for i in range(5)}}})
    check = below(["bcfw"], ["wavg", *[f"ssg{i}" for i in range(5)]], fraction=0.5)
    verdict = evaluate(check, stats)
    assert not verdict.holds
    assert verdict.detail.startswith("40 of 48 checkpoints; 5 of 6 curve pairs x panels hold "
                                     "(weakest: bcfw vs wavg at 1: 0 of 8)")
    assert evaluate(below(["bcfw"], [f"ssg{i}" for i in range(5)], fraction=0.5), stats).holds
    assert describe(check).endswith("(50% of the checkpoints), each pair of curves, every panel")


def test_the_papers_words_have_one_reading():
    """'most' and 'generally': more than half of the checkpoints (4 of 8 is not most),
    'always': all of them."""
    half = np.where(PASSES <= 5, 0.5, 2.0)                      # below at 4 of 8 checkpoints
    stats = curves({1: {"a": (PASSES, half), "b": (PASSES, np.ones(8))}})
    assert evaluate(below(["a"], ["b"], fraction=0.5), stats).holds
    assert not evaluate(below(["a"], ["b"], fraction="most"), stats).holds
    assert not evaluate(below(["a"], ["b"], fraction="generally"), stats).holds
    five = np.where(PASSES <= 10, 0.5, 2.0)                     # 5 of 8
    stats = curves({1: {"a": (PASSES, five), "b": (PASSES, np.ones(8))}})
    assert evaluate(below(["a"], ["b"], fraction="most"), stats).holds
    assert not evaluate(below(["a"], ["b"], fraction="always"), stats).holds
    assert "(most of the checkpoints)" in describe(below(["a"], ["b"], fraction="most"))
    with pytest.raises(UserError, match="fraction 'often'"):
        below(["a"], ["b"], fraction="often")


def test_most_of_the_improvement_compares_ratios_on_the_log_axis():
    """BCFW Figure 2: SSG 100, BCFW-predefined 10, BCFW 1: the step size (predefined ->
    line search) gives half of the log-improvement (10x of 100x); with BCFW-predefined at
    1.5 it gives 9 %."""
    stats = curves({1: {"ssg": (PASSES, np.full(8, 100.0)), "pre": (PASSES, np.full(8, 10.0)),
                        "bcfw": (PASSES, np.ones(8))}})
    check = {"kind": "most_of", "y": "suboptimality", "whole": ["ssg", "bcfw"],
             "part": ["pre", "bcfw"], "fraction": "most"}
    validate(check, "test")
    verdict = evaluate(check, stats)
    assert verdict.holds and verdict.detail == ("8 of 8 checkpoints; smallest share of the "
                                                "improvement 0.5")
    assert not evaluate({**check, "share": 0.6}, stats).holds
    stats.loc[stats["method"] == "pre", "median"] = 1.5     # the step size gives little of it
    assert not evaluate(check, stats).holds
    stats.loc[stats["method"] == "bcfw", "median"] = 200.0            # no improvement at all
    assert not evaluate(check, stats).holds
    assert describe(check).startswith("pre -> bcfw >= 50% of the improvement ssg -> bcfw")
    with pytest.raises(UserError, match="each \\[from, to\\]"):
        validate({**check, "part": ["pre"]}, "test")


def test_significant_compares_the_bands_over_seeds():
    """BCFW Figure 5, 'helps significantly': lower beyond the seed-to-seed spread."""
    stats = curves({1: {"wavg": (PASSES, np.full(8, 0.30)), "raw": (PASSES, np.full(8, 0.35))}})
    stats = stats.assign(mean=stats["median"], std=0.02,
                         min=stats["median"] - 0.03, max=stats["median"] + 0.03)
    check = below(["wavg"], ["raw"], significant=True)
    assert evaluate(below(["wavg"], ["raw"]), stats).holds
    assert not evaluate(check, stats).holds                        # 0.33 vs 0.32: bands overlap
    assert evaluate(check, stats, center="mean").holds            # 0.32 vs 0.33
    assert "beyond the seeds' bands" in describe(check)
    with pytest.raises(UserError, match="significant to below"):
        validate({"kind": "close", "y": "primal", "curves": ["a", "b"], "factor": 2,
                  "significant": True}, "test")


def test_worsens_rougher_sometimes_and_the_lambda_panel():
    """BCFW Appendix F: BCFW-wavg's test error at lambda = 0.001 'reaches early a low test
    error which then starts to increase'; BCFW-tavg 'sometimes slightly outperforms' BCFW-wavg
    'but its performance fluctuates more widely'."""
    u_shape = np.array([0.30, 0.20, 0.12, 0.10, 0.11, 0.12, 0.125, 0.13])
    smooth = np.array([8, 6, 4, 3, 2, 1.5, 1.2, 1.0])
    jumpy = np.array([8, 5, 6, 2.5, 3, 1.4, 1.6, 1.1])          # below smooth at 3 of 8
    stats = curves({0.001: {"wavg": (PASSES, u_shape), "smooth": (PASSES, smooth),
                            "jumpy": (PASSES, jumpy)},
                    0.01: {"wavg": (PASSES, np.sort(u_shape)[::-1])}})   # keeps improving
    worsens = {"kind": "worsens", "y": "test_error", "curve": "wavg", "factor": 1.2,
               "lambda": 0.001}
    validate(worsens, "test")
    verdict = evaluate(worsens, stats)
    assert verdict.holds and verdict.detail == "1 of 1 panels; end / best 1.3"
    assert not evaluate({**worsens, "factor": 1.5}, stats).holds
    assert not evaluate({**worsens, "lambda": 0.01}, stats).holds
    assert describe(worsens) == ("wavg ends >= 1.2x worse than its best in test_error, "
                                 "passes 0-end (every checkpoint), lambda = 0.001")
    rougher = {"kind": "rougher", "y": "suboptimality", "curves": ["jumpy", "smooth"]}
    validate(rougher, "test")
    assert evaluate(rougher, stats).holds
    assert not evaluate({**rougher, "curves": ["smooth", "jumpy"]}, stats).holds
    both_monotone = evaluate({**rougher, "curves": ["smooth", "smooth"]}, stats)
    assert not both_monotone.holds                       # not "inf": neither fluctuates
    assert both_monotone.detail == "0 of 1 panels; fluctuation ratio 1"
    assert evaluate(below(["jumpy"], ["smooth"], fraction="sometimes"), stats).holds
    assert not evaluate(below(["jumpy"], ["smooth"], fraction="most"), stats).holds
    assert not evaluate(below(["smooth"], ["smooth"], factor=2, fraction="sometimes"),
                        stats).holds
    with pytest.raises(UserError, match="rougher compares two curves"):
        validate({**rougher, "curves": ["a", "b", "c"]}, "test")


def test_best_of_takes_the_value_where_another_column_is_best():
    """SAP's tables print the #NZ of the model of maximum test accuracy within 50 passes."""
    nnz = np.array([10, 50, 200, 900, 2000, 3000, 4000, 5000], float)
    accuracy = np.array([0.5, 0.8, 0.9, 0.95, 0.96, 0.955, 0.95, 0.94])   # best at pass 10
    stats = curves({1: {"sap": (PASSES, nnz)}})
    stats["best_of"] = accuracy
    check = {"kind": "paper", "y": "nnz", "curve": "sap", "value": 2313, "tolerance": 500,
             "at": "best", "best_of": "test_accuracy", "passes": [0, 50]}
    validate(check, "test")
    verdict = evaluate(check, stats)
    assert verdict.holds and verdict.detail == "1 of 1 panels; ours minus the paper's -313"
    assert evaluate({**check, "passes": [0, 5]}, stats).detail.endswith("-1.41e+03")
    with pytest.raises(UserError, match="best_of picks"):
        validate({**check, "at": "every"}, "test")


def test_at_most_the_papers_number_and_the_nnz_percent_column():
    """SAP Table III: %NZ of 0.01-0.05 % for 'a very small number of features'."""
    from ssvmbench.plotting.curves import aggregate

    logs = pd.DataFrame({"data": "conll2000", "data_variant": "v", "method": "sap",
                         "iterate": "raw", "lambda": 0.1, "seed": 0, "run": "r",
                         "effective_pass": [1.0, 2.0], "nnz": [3000, 30000], "d": 36_950_006})
    stats = aggregate(logs, "nnz_percent")
    assert stats["median"].tolist() == pytest.approx([100 * 3000 / 36_950_006,
                                                      100 * 30000 / 36_950_006])
    check = {"kind": "paper", "y": "nnz_percent", "curve": "sap", "value": 0.05,
             "at_most": True, "passes": [1, 1]}
    validate(check, "test")
    assert evaluate(check, stats).holds                       # 0.008 %
    assert not evaluate({**check, "passes": [2, 2]}, stats).holds      # 0.08 %
    assert describe(check).startswith("sap at most the paper's 0.05 in nnz_percent")
    two = pd.concat([logs, logs.assign(**{"lambda": 0.01, "nnz": [3500, 3500]})])
    mixed = evaluate({**check, "passes": [2, 2]}, aggregate(two, "nnz_percent"))
    assert mixed.detail == "1 of 2 panels; ours minus the paper's 0.0312"   # not the -0.04
    with pytest.raises(UserError, match="at_most"):
        validate({**check, "tolerance": 0.01}, "test")


def test_lower_as_best_compares_the_lowest_of_a_family():
    # "a" is lowest early, "b" late; "ref" sits between them: each alone fails, the family holds
    a = np.where(PASSES <= 5, 1.0, 3.0)
    b = np.where(PASSES <= 5, 3.0, 1.0)
    stats = curves({1: {"a": (PASSES, a), "b": (PASSES, b), "ref": (PASSES, np.full(8, 2.0))}})
    assert not evaluate(below(["a", "b"], ["ref"], fraction=0.9), stats).holds
    family = below(["a", "b"], ["ref"], lower_as="best")
    verdict = evaluate(family, stats)
    assert verdict.holds and verdict.detail.startswith("8 of 8 checkpoints")
    assert describe(family).startswith("the best of (a, b) below ref")


def test_an_alternative_reading_replaces_and_drops_keys():
    from ssvmbench.papers.claims import reading
    check = below(["a", "b"], ["ref"], lower_as="best", passes=[1, None],
                  alternative={"lower": ["a"], "lower_as": None, "why": "a alone"})
    other = reading(check)
    assert other["lower"] == ["a"] and "lower_as" not in other and "alternative" not in other
    assert other["passes"] == [1, None] and other["why"] == "a alone"
    with pytest.raises(UserError, match="alternative"):
        validate({**check, "alternative": {"lower": ["a"]}}, "test")
    with pytest.raises(UserError, match="alternative"):
        validate({**check, "alternative": {"kind": "nope", "why": "x"}}, "test")


def test_early_compares_the_best_of_the_first_passes_with_the_run():
    accuracy = np.array([0.80, 0.90, 0.93, 0.94, 0.95, 0.95, 0.96, 0.96])
    stats = curves({1: {"sap": (PASSES, accuracy)}})
    check = {"kind": "early", "y": "test_accuracy", "curve": "sap", "tolerance": 0.05,
             "within": [0, 50], "passes": [0, 2], "at": "best"}
    validate(check, "test")
    verdict = evaluate(check, stats)       # best of passes 0-2: 0.93, of 0-50: 0.96
    assert verdict.holds and verdict.detail.endswith("early best minus the best -0.03")
    assert not evaluate({**check, "tolerance": 0.01}, stats).holds
    with pytest.raises(UserError, match="within"):
        validate({**check, "within": 50}, "test")


def test_steady_compares_one_curve_across_the_panels_of_a_dataset():
    stats = curves({0.1: {"sap": (PASSES, np.full(8, 0.950))},
                    1.0: {"sap": (PASSES, np.full(8, 0.955))},
                    10.0: {"sap": (PASSES, np.full(8, 0.958))}})
    check = {"kind": "steady", "y": "test_accuracy", "curve": "sap", "tolerance": 0.01,
             "at": "best"}
    validate(check, "test")
    verdict = evaluate(check, stats)
    assert verdict.holds and verdict.detail == "1 of 1 datasets; largest spread 0.008"
    assert not evaluate({**check, "tolerance": 0.005}, stats).holds
    with pytest.raises(UserError, match="at: best"):
        validate({**check, "at": "every"}, "test")


def test_evidence_is_worded_apart_from_the_papers_verdicts():
    stats = curves({1: {"fast": (PASSES, 1 / PASSES), "slow": (PASSES, 10 / PASSES)}})
    assert evaluate(below(["fast"], ["slow"], evidence=True), stats).word == "evidence: holds"
    assert evaluate(below(["slow"], ["fast"], evidence=True), stats).word == "evidence: fails"
    assert evaluate(below(["fast"], ["slow"]), stats).word == "reproduced"


def test_across_most_judges_a_sentence_on_the_panels_of_every_preset():
    from ssvmbench.papers.claims import across_presets
    good = (PASSES, 1 / PASSES)
    bad = (PASSES, 100 / PASSES)
    slow = (PASSES, 10 / PASSES)
    quote = "In most of the experiments, it dominates."
    check = below(["it"], ["other"], across="most", quote=quote)
    three = evaluate(check, curves({0.1: {"it": good, "other": slow},
                                    0.01: {"it": good, "other": slow},
                                    0.001: {"it": bad, "other": slow}}))
    one = evaluate(check, curves({1: {"it": bad, "other": slow}}))
    assert not three.holds and three.panels == (2, 3) and one.panels == (0, 1)
    judged = across_presets([(check, three), (check, one), (below(["x"], ["y"]), one)])
    assert [v.holds for _, v in judged] == [False, False, False]      # 2 of 4: not most
    four = evaluate(check, curves({1: {"it": good, "other": slow}}))
    judged = across_presets([(check, three), (check, four)])
    assert [v.holds for _, v in judged] == [True, True]               # 3 of 4
    assert judged[0][1].detail.endswith("3 of 4 comparable panels of 2 figures hold")
