"""The statistics cowbird computes itself, on real tables, against the packages that compute them and
against the numbers they gave before this test was written (recorded from EWT, ``../shared/reference``):

- the collocation measures (``analysis_merge.scores``; logDice also ``search.sketches.log_dice``)
  against association-measures (Evert's UCS measures, what cwb-ccc scores with);
- keyness (``wordlist.keyness``): the signed log-likelihood against scipy.stats' G-test
  (``power_divergence``, log-likelihood) and Log Ratio against association-measures' (Hardie 2014's
  zero of 0.5);
- the critical log-likelihood (``wordlist.Significance.critical``) against ``scipy.stats.chi2.isf``;
- the trend's band (``trends.wilson``) against ``scipy.stats.binomtest(...).proportion_ci("wilson")``.

Why the formulas stay cowbird's own, each a line or two: ``docs/architecture.md`` (statistics)."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import pytest

from cowbird.core.analysis_merge import MEASURES, scores
from cowbird.core.search.sketches import log_dice
from cowbird.core.trends import Z_95, wilson
from cowbird.core.wordlist import Significance, keyness
from tests.support import unavailable

SAME = 1e-9
"""Relative difference allowed: float rounding, never another formula."""


def package(name: str) -> ModuleType:
    """A package of the test environment (scipy with ``cowbird[build]``, association-measures with
    ``cowbird[cwb]``), or skip (fail under CI)."""
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:
        unavailable(f"{name} is not installed (pip install -c constraints.txt association-measures scipy)")


# -- collocations: EWT, `cowbird query --collocations lemma --within s`, the first and last rows by
# log-likelihood, column by column: the values, their O11 = f, C1 = f2 and E11, and the scores as they were


class Collocations(NamedTuple):
    query: str
    r1: int
    """Tokens in the windows."""
    n: int
    """Tokens outside the hits."""
    values: list[str]
    o11: list[int]
    c1: list[int]
    e11: list[float]
    scores: dict[str, list[float]]
    """Each measure's score of each value."""


GO = Collocations("[lemma=\"go\"], window 5", 6197, 254054,
    ["to", "back", "ahead", "."], [515, 41, 12, 157], [6309, 291, 21, 10904],
    [153.891979657868, 7.098203531532667, 0.5122414919662749, 265.97529659048865], {
        "log_likelihood": [566.1103039115632, 80.412811657086, 60.907767271143065, -55.57584664405525],
        "mi": [1.7426543871751103, 2.530098062267265, 4.550066478499861, -0.7605276973561176],
        "mi3": [19.759511631316272, 13.245202071503432, 11.719991479942173, 13.828713800427137],
        "t_score": [15.912320582529487, 5.294571089262403, 3.3162302334993425, -8.697175493983817],
        "z_score": [29.109124337486197, 12.724727427872125, 16.05084572638586, -6.682014423579304],
        "dice": [0.08236046697585159, 0.012638717632552405, 0.0038597619813444837, 0.018361499327524705],
        "log_dice": [10.398095820159448, 7.693993900400811, 5.982727599380093, 8.232827678566768],
        "min_sensitivity": [0.08162941829132984, 0.006616104566725835, 0.0019364208487978054, 0.014398385913426265],
    })
ADJECTIVE_NOUN = Collocations("[pos=\"JJ\"] [pos=\"NN.*\"], window 4", 50122, 237790,
    ["a", "the", "I"], [2252, 3131, 606], [5366, 11027, 5054],
    [1131.0595567517557, 2324.299987383826, 1065.2953782749485], {
        "log_likelihood": [1219.5553791573882, 346.7840782595574, -291.27139893131607],
        "mi": [0.9935319299487455, 0.42982722528466466, -0.813863808342787],
        "mi3": [23.267514154109204, 23.654642811562006, 17.672484158603115],
        "t_score": [23.621003588506316, 14.416854981412328, -18.657599364178786],
        "z_score": [33.33034445053845, 16.732698040236667, -14.072039770539318],
        "dice": [0.08117070357554787, 0.1024055994374397, 0.021966072205306657],
        "log_dice": [10.377102928858395, 10.71236650775295, 8.491420732033614],
        "min_sensitivity": [0.04493036989745022, 0.06246757910697897, 0.01209049918199593],
    })
TABLES = [GO, ADJECTIVE_NOUN]

# -- keywords: EWT's reviews (55,588 tokens) against its weblogs (44,382), lowercased word forms:
# (target, reference, log-likelihood, Log Ratio, its 95 % interval, %DIFF, simple maths) as they were

REVIEWS, WEBLOGS = 55588, 44382
KEYWORDS = [
    ("i", 1528, 203, 871.8985128921298, 2.58729411615782, 2.37605738017686, 2.7985308521387795,
     500.97047560677777, 6.008609721010448),
    ("!", 486, 20, 434.51992264515735, 4.278085614025666, 3.6329177361393015, 4.92325349191203,
     1840.1356407857813, 19.360612372941016),
    ("government", 0, 44, -71.45918200478671, -6.784230413330049, -10.805834146723019, -2.76262667993708,
     -99.09271621736542, 0.0010076654044095794),
    ("the", 2186, 2507, -153.58233522072317, -0.522467389854787, -0.6052146536056839, -0.4397201261038901,
     -30.381983766314942, 0.6961855408343881),
    ("lol", 2, 0, 2.347611161419015, 1.6752012053072476, -2.7957570469668505, 6.146159457581346,
     219.3638914873714, 36.978988270849825),
    ("we", 305, 79, 95.98187929429405, 1.624085889580393, 1.2671150364468815, 1.9810567427139043,
     208.24679399888694, 3.0812986716642388),
]

# -- trends: hits and tokens of a period, and the band as it was (proportions)

BANDS = [
    (1528, 55588, 0.026161075351834595, 0.028880120955491403),
    (0, 44382, 0.0, 8.654694142180608e-05),
    (44, 44382, 0.0007386377855408564, 0.0013305233659020143),
    (1, 3, 0.06149194472039621, 0.7923403991979522),
    (3, 3, 0.4385029682449546, 1.0),
    (515, 254818, 0.0018540229556680437, 0.0022030918226495894),
]


def ours(table: Collocations) -> tuple[Any, dict[str, Any]]:
    o11 = np.asarray(table.o11, dtype=np.float64)
    c1 = np.asarray(table.c1, dtype=np.float64)
    return scores(o11, float(table.r1), c1, float(table.n), list(MEASURES))


@pytest.mark.parametrize("table", TABLES, ids=[table.query for table in TABLES])
def test_collocation_scores_are_today_s(table: Collocations) -> None:
    e11, computed = ours(table)
    for k, (value, expected) in enumerate(zip(table.values, table.e11, strict=True)):
        assert float(e11[k]) == pytest.approx(expected, rel=SAME), (table.query, value)
        for measure in MEASURES:
            assert float(computed[measure][k]) == pytest.approx(table.scores[measure][k], rel=SAME), (
                table.query, value, measure)


@pytest.mark.parametrize("table", TABLES, ids=[table.query for table in TABLES])
def test_collocation_scores_are_association_measures_(table: Collocations) -> None:
    pd = package("pandas")
    am = package("association_measures.measures")
    r1, n = table.r1, table.n
    cells = list(zip(table.o11, table.c1, strict=True))
    frame = pd.DataFrame({
        "O11": table.o11, "O12": [r1 - o11 for o11 in table.o11],
        "O21": [c1 - o11 for o11, c1 in cells], "O22": [n - r1 - c1 + o11 for o11, c1 in cells],
    }, index=table.values)
    theirs = am.score(frame, digits=None)
    e11, computed = ours(table)
    assert np.allclose(e11, theirs["E11"], rtol=SAME, atol=0)
    for mine, their in (("log_likelihood", "log_likelihood"), ("t_score", "t_score"), ("z_score", "z_score"),
                        ("dice", "dice"), ("min_sensitivity", "min_sensitivity")):
        assert np.allclose(computed[mine], theirs[their], rtol=SAME, atol=0), (table.query, mine)
    # MI in log2 (CQPweb's), theirs in log10; MI³ and logDice from their E11 and Dice
    assert np.allclose(computed["mi"] * math.log10(2), theirs["mutual_information"], rtol=SAME, atol=0)
    o11 = frame["O11"].to_numpy(dtype=np.float64)
    assert np.allclose(computed["mi3"], np.log2(o11**3 / theirs["E11"].to_numpy()), rtol=SAME, atol=0)
    assert np.allclose(computed["log_dice"], 14 + np.log2(theirs["dice"].to_numpy()), rtol=SAME, atol=0)
    # a word sketch's logDice (headword f(x, R), collocate f(R, y)) is the same Dice
    sketch = [log_dice(o11, r1, c1) for o11, c1 in cells]
    assert np.allclose(sketch, computed["log_dice"], rtol=SAME, atol=0)


@pytest.mark.parametrize("row", KEYWORDS, ids=[row[0] for row in KEYWORDS])
def test_keyness_is_today_s(row: tuple[Any, ...]) -> None:
    _, target, reference, *recorded = row
    found = keyness(target, REVIEWS, reference, WEBLOGS)
    mine = [found.log_likelihood, found.log_ratio, found.log_ratio_low, found.log_ratio_high, found.diff,
            found.simple_maths]
    assert mine == pytest.approx(recorded, rel=SAME)


@pytest.mark.parametrize("row", KEYWORDS, ids=[row[0] for row in KEYWORDS])
def test_keyness_is_scipy_s_g_test_and_association_measures_log_ratio(row: tuple[Any, ...]) -> None:
    stats = package("scipy.stats")
    _, target, reference, *_ = row
    found = keyness(target, REVIEWS, reference, WEBLOGS)
    both = target + reference
    expected = [REVIEWS * both / (REVIEWS + WEBLOGS), WEBLOGS * both / (REVIEWS + WEBLOGS)]
    g = stats.power_divergence([target, reference], expected, lambda_="log-likelihood").statistic
    assert abs(found.log_likelihood) == pytest.approx(float(g), rel=SAME)
    assert math.copysign(1, found.log_likelihood) == (1 if target / REVIEWS >= reference / WEBLOGS else -1)
    pd = package("pandas")
    am = package("association_measures.measures")
    table = pd.DataFrame({"O11": [target], "O21": [reference], "R1": [REVIEWS], "R2": [WEBLOGS]})
    their = am.log_ratio(table, disc=0.5, discounting="Hardie2014")
    assert found.log_ratio == pytest.approx(float(their.iloc[0]), rel=SAME)


COMPARED = [1, 2, 10, 1_000, 5_000, 123_456, 10_000_000]


@pytest.mark.parametrize("p", [0.05, 0.01, 0.001, 1e-6, 1e-12, 1e-17, 1e-200])
def test_the_critical_log_likelihood_is_scipy_s_chi_squared_quantile(p: float) -> None:
    stats = package("scipy.stats")
    for compared in COMPARED:
        corrected = Significance(p=p).critical(compared)
        assert corrected == pytest.approx(float(stats.chi2.isf(p / compared, 1)), rel=1e-13), compared
        assert Significance(p=p, bonferroni=False).critical(compared) == pytest.approx(
            float(stats.chi2.isf(p, 1)), rel=1e-13)
    assert Significance(p=1.0).critical(10) == 0.0


def test_the_critical_log_likelihood_is_today_s_where_today_s_had_one() -> None:
    """Before, the quantile came from 1 - p/2: the same to 1e-9 for the p a list of up to 100,000
    items asks at 0.05; for smaller p it drifted (3e-6 off at 1e-12), and below 1e-16 there was none."""
    recorded = {1: 3.8414588206941236, 10: 7.879438576622458, 5000: 19.511420964645055, 123456: 25.670347170263224}
    for compared, value in recorded.items():
        assert Significance().critical(compared) == pytest.approx(value, rel=SAME)
    assert Significance(p=0.01, bonferroni=False).critical(7) == pytest.approx(6.634896601021211, rel=SAME)
    assert Significance(p=1e-17, bonferroni=False).critical(1) == pytest.approx(73.51251703073711, rel=1e-13)
    assert math.isfinite(Significance(p=5e-324).critical(10**9))


@pytest.mark.parametrize(("hits", "tokens", "low", "high"), BANDS)
def test_the_wilson_band_is_today_s_and_scipy_s(hits: int, tokens: int, low: float, high: float) -> None:
    assert wilson(hits, tokens) == pytest.approx((low, high), rel=SAME)
    stats = package("scipy.stats")
    theirs = stats.binomtest(hits, tokens).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson(hits, tokens) == pytest.approx((theirs.low, theirs.high), rel=1e-12, abs=1e-300)
    assert Z_95 == float(stats.norm.ppf(0.975))
