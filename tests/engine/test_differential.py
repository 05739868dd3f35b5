"""Differential tests: the native engine against real CQP on the EWT reference corpus (issue 11).

Hypothesis writes queries in the CQP the native engine accepts (``query_lang/cowbird/query/cqp.lark``), with
values taken from frequent EWT words, lemmas and tags so that most queries have hits, and real
CQP (``tests/realcqp.py``) judges: both must find the same (match, matchend) pairs in the same
order, or both must refuse the query. Runs are derandomized, so CI sees the same examples every
time; ``COWBIRD_DIFF_EXAMPLES`` sets how many per test.

A difference found this way is shrunk by hand into an explicit case, a strict xfail until the
engine is fixed, then a regular parity case in ``FIXED_DIFFERENCES``. Where CQP itself gives no
answer (it dies, times out, or aborts with "Infinite loop detected" on a repeated zero-width
item), there is no verdict.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st

from cowbird.core.errors import CowbirdError, QueryTimeout, QueryTooExpensive
from cowbird.core.wire import Strategy
from cowbird.engines.base import Deadline, EngineOptions
from cowbird.engines.native import NativeEngine
from cowbird.query import Alternation, Pattern, QueryError, Sequence, StructuralTag, TokenPattern, canonical, parse_cqp
from cowbird.store.compress import compress_corpus
from cowbird.store.registry import parse_registry
from tests.realcqp import Hits, NoAnswer, RealCqp
from tests.support import copy_reference_ewt, parity_hits, parity_queries, reference_cqp, require_reference

pytestmark = pytest.mark.e2e  # a real cqp process answers every query

# The suite's share is a regression net (CI: 80 EWT queries, 40 compressed, 40 German, 20 marked runs,
# 40 + 20 MU/TAB); the deep search is bench/differential.py's recorded runs of thousands
EXAMPLES = int(os.environ.get("COWBIRD_DIFF_EXAMPLES", "80"))  # more for a deeper search: COWBIRD_DIFF_EXAMPLES=1000
SCALE = max(1.0, EXAMPLES / 120)
"""The generated tests' time limits grow with the examples asked (``bench/differential.py`` asks thousands)."""
JUDGE_SECONDS = float(os.environ.get("COWBIRD_DIFF_CQP_SECONDS", "20"))
"""How long real CQP may take for one query before it counts as no verdict (``bench/differential.py
--cqp-seconds``: a long run spends most of its time on the few queries CQP cannot answer)."""
BUDGET = float(os.environ.get("COWBIRD_DIFF_BUDGET", "200"))
"""Seconds one generated test may spend on its queries (0: no limit; ``bench/differential.py``). Past
it the remaining examples are drawn but not run: a slow machine checks fewer queries instead of
failing on the test's time limit, which is only the net for a hang. Once a query fails, the budget
is lifted for the rest of the test, so hypothesis shrinks it as usual."""
HANG = 600 * SCALE
"""The generated tests' time limit: the net for a hang, well past the budget (and a failure's shrinking)."""
SEEDED = "COWBIRD_DIFF_SEEDED" in os.environ
"""A run of ``bench/differential.py --seed``: random, with hypothesis's seed from the command line;
else derandomized (CI sees the same queries every run)."""
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not SEEDED,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


OPTIONS = EngineOptions(automaton=os.environ.get("COWBIRD_NATIVE_AUTOMATON", "auto"))
"""The native engine's options; COWBIRD_NATIVE_AUTOMATON=cqp runs every query on CQP's DFA."""

CANONICAL_CHECK_HITS = 20_000
"""Queries with at most this many hits are also run as canonical text (more would double the time)."""


class Case(NamedTuple):
    query: str
    strategy: Strategy = "standard"
    hard_boundary: int = 500


# ---------------------------------------------------------------------------- the two engines


@pytest.fixture(scope="module")
def ewt() -> NativeEngine:
    return NativeEngine.open(require_reference() / "cwb" / "registry", "ewt", OPTIONS)


@pytest.fixture(scope="module")
def compressed_ewt(tmp_path_factory: pytest.TempPathFactory) -> NativeEngine:
    """EWT with every p-attribute compressed as cwb-huffcode and cwb-compress-rdx do: the engine
    then tests frequent tokens through the reverse index instead of gathering ids."""
    registry = copy_reference_ewt(tmp_path_factory.mktemp("compressed"))
    entry = parse_registry(registry / "ewt")
    compress_corpus(entry)
    return NativeEngine.open(registry, "ewt", OPTIONS)


GERMAPARL = "germaparl"


@pytest.fixture(scope="module")
def germaparl() -> NativeEngine:
    """GERMAPARL1386 (149,800 tokens of German parliamentary speeches, encoded by real CWB)."""
    return NativeEngine.open(require_reference() / GERMAPARL / "registry", "germaparl1386", OPTIONS)


@pytest.fixture(scope="module")
def germaparl_judge() -> Iterator[RealCqp]:
    cqp = RealCqp(reference_cqp(), require_reference() / GERMAPARL / "registry", "GERMAPARL1386", JUDGE_SECONDS)
    yield cqp
    cqp.close()


def native_answer(engine: NativeEngine, case: Case, seconds: float | None = None) -> Hits | str | None:
    """The native engine's hits, its refusal as text, or None when it hit a resource limit or ran
    past ``seconds`` (no verdict)."""
    try:
        # evaluate() rather than run(): all hits as arrays, without a Hit object each
        found = engine.evaluate(parse_cqp(case.query), case.strategy, case.hard_boundary, Deadline(seconds))
    except (QueryTooExpensive, QueryTimeout):
        return None
    except (QueryError, CowbirdError) as error:
        if isinstance(error, CowbirdError) and error.status >= 500:
            raise  # the engine failed: that is a bug, not a refusal
        return f"{type(error).__name__}: {error}"
    return list(zip(found.match.tolist(), found.matchend.tolist(), found.target.tolist(), found.keywords.tolist(),
                    strict=True))


def difference(native: Hits | str, cqp: Hits | str) -> str | None:
    """None when the answers agree; else what differs, in a few lines."""
    if isinstance(native, str) or isinstance(cqp, str):
        if isinstance(native, str) and isinstance(cqp, str):
            return None  # both refuse; their messages are worded differently
        return f"native: {summary(native)}\nCQP: {summary(cqp)}"
    if native == cqp:
        return None
    at = next((i for i, (a, b) in enumerate(zip(native, cqp, strict=False)) if a != b), min(len(native), len(cqp)))
    only_native, only_cqp = sorted(set(native) - set(cqp)), sorted(set(cqp) - set(native))
    return (
        f"native {len(native)} hits, CQP {len(cqp)}; first difference at #{at}: "
        f"native {native[at : at + 3]}, CQP {cqp[at : at + 3]}\n"
        f"only native ({len(only_native)}): {only_native[:5]}\nonly CQP ({len(only_cqp)}): {only_cqp[:5]}"
    )


def summary(answer: Hits | str) -> str:
    return answer if isinstance(answer, str) else f"{len(answer)} hits {answer[:3]}"


def note(text: str) -> None:
    """Count an outcome in hypothesis' statistics (``--hypothesis-show-statistics``)."""
    if currently_in_test_context():
        event(text)


def ask(judge: RealCqp, case: Case) -> Hits | str | None:
    """Real CQP's answer, or None when it gave none (timed out or died: no verdict)."""
    try:
        answer = judge.query(case.query, case.strategy, case.hard_boundary, anchors=True)
    except NoAnswer as error:
        note(f"no verdict: {str(error).splitlines()[0]}")
        return None
    if isinstance(answer, str) and "Infinite loop detected" in answer:
        note("no verdict: CQP aborted the query (infinite loop)")
        return None  # CQP stops the whole query, its hits so far lost; the native engine answers
    return answer


_STARTED: dict[str, float] = {}
"""When each generated test ran its first query (monotonic seconds), by test id; ``inf`` once it failed."""


def running_test() -> str:
    """The id of the test pytest is running (``PYTEST_CURRENT_TEST`` without its phase)."""
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]


def spent() -> bool:
    """Whether the running test has used up ``BUDGET`` (it is counted in hypothesis' statistics)."""
    started = _STARTED.setdefault(running_test(), time.monotonic())
    if BUDGET and time.monotonic() - started > BUDGET:
        note("not run: the test's time budget is spent")
        return True
    return False


def check(engine: NativeEngine, judge: RealCqp, case: Case) -> None:
    """Both engines answer the case alike: the same hits in the same order, or both refuse it
    (within the test's time budget: ``BUDGET``)."""
    if spent():
        return
    try:
        compare(engine, judge, case)
    except BaseException:
        _STARTED[running_test()] = float("inf")  # the budget is lifted: hypothesis shrinks the failure
        raise


def compare(engine: NativeEngine, judge: RealCqp, case: Case) -> None:
    cqp = ask(judge, case)
    # without CQP's verdict the native engine is only asked not to fail, and gets CQP's time for it
    # (some queries CQP aborts at once keep the native engine at work for a minute)
    native = native_answer(engine, case, JUDGE_SECONDS if cqp is None else None)
    if cqp is None:
        return
    if native is None:
        note("no verdict: the native engine refused the work")
        return
    note("both refuse" if isinstance(native, str) and isinstance(cqp, str) else "compared")
    found = difference(native, cqp)
    assert found is None, f"{case}\n{found}"
    if isinstance(native, str) or len(native) > CANONICAL_CHECK_HITS:
        return
    # the canonical text is what nodes run: it must mean to CQP what the query meant
    text = canonical(case.query)
    again = ask(judge, case._replace(query=text)) if text != case.query else cqp
    assert again is None or again == cqp, f"{case}: canonical {text!r} changes CQP's answer to {summary(again)}"


# ---------------------------------------------------------------------------- query generator

# Frequent values of each EWT attribute, literal and as regexes, so that generated queries find
# something (and %c / %d have something to fold).
LITERALS = {
    "word": ["the", "The", "THE", "to", "and", "a", "of", "I", "in", "is", "you", "that", "it", "have", "not",
             "was", "be", "'s", "n't", "’s", ",", ".", "?", "(", "-", "house", "good", "decor", "Déjà"],
    "lemma": ["be", "have", "do", "go", "the", "good", "not", "I", "say", "get", "make", "time", "a", "to"],
    "pos": ["NN", "NNS", "NNP", "IN", "DT", "JJ", "RB", "VB", "VBD", "VBZ", "PRP", "CC", "MD", "TO", ",", "nn"],
    "upos": ["NOUN", "VERB", "ADJ", "DET", "ADP", "PRON", "PUNCT", "AUX", "ADV", "PROPN", "CCONJ", "noun"],
}  # fmt: skip
REGEXES = {
    "word": ["th.*", "[Tt]he", ".*ing", ".*ly", "a|an|the", "(un|in).+", "[A-Z].*", "[,.?!]",
             ".{1,3}", "go(es|ing|ne)?", "[0-9]+", "[a-z]+", "..", "[^a-z]+", ".*é.*", "to|of"],
    "lemma": ["b.*", "go|get|make", "[a-z]{2}", "(be|have)", ".*e", "d."],
    "pos": ["NN.*", "VB[DZ]?", "JJ.?", "N.*|V.*", "PRP\\$", "[A-Z]{2}", "-[LR]RB-", "."],
    "upos": ["N.*", "PRO.*", "A.*|D.*", "[A-Z]+", "(NOUN|VERB)"],
}  # fmt: skip
FLAGS = st.sampled_from(["", "", "", "%c", "%d", "%cd"])


@dataclass(frozen=True)
class Vocabulary:
    """What generated queries are made of on one corpus: frequent values of its p-attributes
    (literal and as regexes), its tags, an s-attribute with values for constraints, the regions
    a query may keep ``within``, and the attributes whose lexicons are large (a constraint may
    compare an unset label with a regex on them: see unset-label-value)."""

    literals: dict[str, list[str]]
    regexes: dict[str, list[str]]
    tags: list[str]
    region_attribute: str
    region_values: list[str]
    within: list[str]
    large: list[str]

    @property
    def attributes(self) -> list[str]:
        return list(self.literals)


EWT_WORDS = Vocabulary(
    LITERALS, REGEXES,
    ["<s>", "</s>", "<s>", "</s>", "<text>", "</text>", "<p>", "</p>", '<text_genre="reviews">',
     '<text_genre!="email">', '<text_genre="(weblog|email)">', '<text_genre="R.*"%c>', '<text_year="">'],
    "text_genre", ['"reviews"', '"email|weblog"', '"R.*"%c'], ["s", "text", "p"], ["word", "lemma"],
)
# German parliamentary speeches (STTS tags; umlauts, ß and the old spelling daß)
GERMAPARL_WORDS = Vocabulary(
    {
        "word": ["die", "der", "und", "Sie", "ist", "nicht", "daß", "wir", "Dr.", "CDU", "Beifall", "für", "Das",
                 ",", ".", "(", "--", "Ausschuß", "Nähe", "früh", "DIE", "dass", "ss"],
        "lemma": ["die", "sie", "sein", "haben", "werden", "eine", "daß", "diese", "Pädagogik", "schließen"],
        "pos": ["NN", "ART", "NE", "APPR", "$.", "ADV", "$,", "PPER", "ADJA", "VAFIN", "VVFIN", "VVINF", "nn"],
    },
    {
        "word": ["d.*", "[Dd]ie|[Dd]er", ".*ung", ".*ß.*", ".*ä.*", "[A-ZÄÖÜ].*", "[,.!?]", ".{1,3}", "[0-9]+",
                 "[a-zäöüß]+", "(un|ver).+", "Sie|sie"],
        "lemma": ["s.*", "sein|haben|werden", ".*ung", ".*ß.*", "[a-z]{2,4}"],
        "pos": ["N.*", "V.*FIN", "ADJ[AD]", "\\$.*", "P.*", "V[AMV].*", "[A-Z]{2,4}"],
    },
    ["<s>", "</s>", "<s>", "</s>", "<text>", "</text>", "<p>", "</p>", '<text_party="SPD">',
     '<text_party!="CDU">', '<text_party="(CDU|CSU)">', '<text_role="mp">', '<text_party="grüne"%c>'],
    "text_party", ['"SPD"', '"CDU|CSU"', '"gr.*"%c', '"Bündnis 90/Die Grünen"'], ["s", "text", "p"],
    ["word", "lemma"],
)
VOCAB = EWT_WORDS
"""The vocabulary the generators draw from (``vocabulary()`` swaps it for a test on another corpus)."""


@contextlib.contextmanager
def vocabulary(words: Vocabulary) -> Iterator[None]:
    global VOCAB
    before, VOCAB = VOCAB, words
    try:
        yield
    finally:
        VOCAB = before
BOUNDED = st.one_of(
    st.just("?"),
    st.integers(0, 3).map(lambda n: f"{{{n}}}"),
    st.integers(1, 3).map(lambda m: f"{{,{m}}}"),
    st.integers(0, 2).flatmap(lambda n: st.integers(max(n, 1), 3).map(lambda m: f"{{{n},{m}}}")),
)
UNBOUNDED = st.one_of(st.sampled_from(["*", "+"]), st.integers(0, 2).map(lambda n: f"{{{n},}}"))


@st.composite
def values(draw: st.DrawFn, attribute: str) -> str:
    """A quoted value with flags: a frequent literal or a regex over the attribute's values."""
    if draw(st.booleans()):
        text = draw(st.sampled_from(VOCAB.literals[attribute]))
        flags = draw(st.sampled_from(["", "", "%c", "%d", "%cd", "%l"]))
    else:
        text = draw(st.sampled_from(VOCAB.regexes[attribute]))
        flags = draw(FLAGS)
    quote = "'" if "'" not in text and draw(st.integers(0, 9)) == 0 else '"'
    return f"{quote}{text}{quote}{flags}"


@st.composite
def attribute_tests(draw: st.DrawFn) -> str:
    """``pos="NN"``; now and then a comparison of two attributes (``word != lemma``), the value of
    the token's region (``_.text_genre="email"``) or ``lbound(s)`` / ``rbound(s)``."""
    kind = draw(st.integers(0, 19))
    if kind == 0:
        left, right = draw(st.sampled_from(VOCAB.attributes)), draw(st.sampled_from(VOCAB.attributes))
        return f"{left} {draw(st.sampled_from(['=', '!=']))} {right}"
    if kind == 1:
        value = draw(st.sampled_from(VOCAB.region_values))
        return f"_.{VOCAB.region_attribute}{draw(st.sampled_from(['=', '!=']))}{value}"
    if kind == 2:
        return f"{draw(st.sampled_from(['lbound', 'rbound']))}({draw(st.sampled_from(VOCAB.within))})"
    attribute = draw(st.sampled_from(VOCAB.attributes))
    return f"{attribute}{draw(st.sampled_from(['=', '=', '=', '!=']))}{draw(values(attribute))}"


def conditions() -> st.SearchStrategy[str]:
    # negations are few: they hold almost everywhere, and every position a candidate costs time
    tests = attribute_tests()
    leaves = st.one_of(tests, tests, tests, tests.map(lambda test: f"!{test}"))
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            inner.map(lambda c: f"!({c})"),
            inner.map(lambda c: f"({c})"),
            st.tuples(inner, inner).map(" & ".join),
            st.tuples(inner, inner).map(" & ".join),
            st.tuples(inner, inner).map(" | ".join),
        ),
        max_leaves=2,
    )


@st.composite
def tokens(draw: st.DrawFn, marked: bool = False, labelled: bool = True) -> str:
    """``[condition]``, ``[]`` or a bare ``"word"``; ``marked`` ones may carry ``@`` (the target,
    also written ``@0``) or ``@1`` (the keyword), and, if ``labelled``, a label."""
    kind = draw(st.sampled_from(["condition"] * 5 + ["any", "bare", "bare"]))
    if kind == "condition":
        body = f"[{draw(conditions())}]"
    else:
        body = "[]" if kind == "any" else draw(values("word"))
    if not marked:
        return body
    label = f"{draw(st.sampled_from(['a', 'b']))}:" if labelled and draw(st.integers(0, 2)) == 0 else ""
    anchor = draw(st.sampled_from(["@", "@0:", "@1", "@1 "] + [""] * 12))
    return f"{anchor}{label}{body}"


@st.composite
def quantified(draw: st.DrawFn, element: st.SearchStrategy[str]) -> str:
    item = draw(element)
    # nested unbounded repetitions make CQP's simulation crawl (seconds to minutes per query)
    kinds = ["", "", "bounded"] + ([] if unbounded_text(item) else ["unbounded"])
    kind = draw(st.sampled_from(kinds))
    return item + ("" if not kind else draw(BOUNDED if kind == "bounded" else UNBOUNDED))


def lookaheads() -> st.SearchStrategy[str]:
    """CQP's lookahead ``[: ... :]``: a token test that consumes nothing."""
    # a space before ":]": CQP's lexer would read "lemma:" in [:word=lemma:] as a label
    return conditions().map(lambda condition: f"[:{condition} :]")


def groups(anchors: bool = True) -> st.SearchStrategy[str]:
    """Tokens and parenthesised sequences and alternations of them, each maybe quantified; with
    ``anchors``, their tokens may carry ``@`` and ``@1``."""

    def pattern(element: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        sequence = st.lists(quantified(element), min_size=1, max_size=3).map(" ".join)
        return st.one_of(sequence, sequence, st.tuples(sequence, sequence).map(" | ".join))

    # anchors and labels inside groups, on optional and repeated tokens next to ones that match the
    # same; tags and lookaheads too (CQP counts them as steps: tag-is-a-step)
    zero_width = st.one_of(st.sampled_from(VOCAB.tags), lookaheads())
    leaves = st.one_of(tokens(), tokens(), tokens(marked=anchors), zero_width)
    return st.recursive(leaves, lambda inner: pattern(inner).map(lambda p: f"({p})"), max_leaves=3)


@st.composite
def marked_runs(draw: st.DrawFn) -> str:
    """An anchor or a label on a repeated or optional token followed by unbounded ``[]`` (``@1[]{0,2}
    []* [upos="PUNCT"]``, ``a:[]+ []+``): the paths through the runs meet in one of CQP's DFA states,
    which keeps the values written last in its state order (issue 50); or on a single token between
    parts of variable length (``[]* @[] []*``), which one match may have at several positions."""
    marks = [*(["@", "@1"] * 2), "a:", "@a:", "@1 a:"]
    item = draw(st.sampled_from(["[]", "[]", draw(tokens())]))
    repeat = draw(st.sampled_from(["?", "*", "+", "{0,2}", "{1,3}", "{2,}", "", ""]))
    run = f"{draw(st.sampled_from(marks))}{item}{repeat}"
    gaps = draw(st.lists(st.sampled_from(["[]*", "[]+", "[]?", "[]{0,2}"]), min_size=1, max_size=2))
    before = draw(st.sampled_from(["", "", "[] ", "[]* ", "[]{0,2} ", f"{draw(tokens())}* "]))
    return f"{before}{run} {' '.join(gaps)} {draw(tokens())}"


def consumes_nothing(pattern: Pattern) -> bool:
    """Whether a pattern can match without consuming a token (tags are zero-width)."""
    if isinstance(pattern, TokenPattern):
        return pattern.lookahead
    if isinstance(pattern, StructuralTag):
        return True
    if isinstance(pattern, Sequence):
        return all(consumes_nothing(item) for item in pattern.items)
    if isinstance(pattern, Alternation):
        return any(consumes_nothing(option) for option in pattern.options)
    return pattern.min == 0 or consumes_nothing(pattern.item)


def unbounded_text(text: str) -> bool:
    """Whether a pattern (as text) has a repetition without an upper bound."""
    try:
        return unbounded(pattern_of(text))
    except QueryError:
        return False


def unbounded(pattern: Pattern) -> bool:
    if isinstance(pattern, TokenPattern | StructuralTag):
        return False
    if isinstance(pattern, Sequence):
        return any(unbounded(item) for item in pattern.items)
    if isinstance(pattern, Alternation):
        return any(unbounded(option) for option in pattern.options)
    return pattern.max is None or unbounded(pattern.item)


@st.composite
def sequences(draw: st.DrawFn, tags: bool, anchors: bool = True) -> str:
    """A top-level sequence: quantified groups, and tokens and tags that every path passes through.

    Tags, lookaheads, labels and anchors inside groups, quantifiers and alternatives, where paths
    meet in one of CQP's DFA states and the engine follows CQP's own DFA (FIXED_DIFFERENCES,
    tag-is-a-step and its neighbours), come in ``groups`` and ``marked_runs``. Every sequence
    consumes a token.
    """
    kinds = [quantified(groups(anchors)), quantified(groups(anchors)), tokens(marked=True)]
    if anchors:
        kinds.append(marked_runs())
    if tags:
        kinds.append(st.sampled_from(VOCAB.tags))
    text = " ".join(draw(st.lists(st.one_of(kinds), min_size=1, max_size=4)))
    with contextlib.suppress(QueryError):  # a query both engines refuse (<s>+) is a case too
        if consumes_nothing(pattern_of(text)):
            text += f" {draw(tokens(marked=True))}"
    return text


def pattern_of(text: str) -> Pattern:
    """The pattern of a generated sequence as it stands: without its labels (no constraint reads
    them yet) and followed by a token (alone, an optional item would match the empty string)."""
    parsed = parse_cqp(f"({re.sub(r'[ab]:', '', text)}) []").pattern
    assert isinstance(parsed, Sequence)
    return Sequence(parsed.items[:-1]) if len(parsed.items) > 2 else parsed.items[0]


def patterns(anchors: bool = True) -> st.SearchStrategy[str]:
    """One sequence, or two alternatives (CQP ties a closing tag in the second to an opening tag in
    the first: strict-regions-in-text-order)."""
    one = sequences(tags=True, anchors=anchors)
    return st.one_of(one, one, st.tuples(one, one).map(" | ".join))


@st.composite
def constraints(draw: st.DrawFn, defined: list[str], anchors: list[str]) -> str:
    """A global constraint that reads every label of the pattern: CQP refuses a query with a label
    it never reads ("Illegal use of labels"). Now and then it reads a label the pattern does not
    set, or ``target`` (``keyword``) without an ``@`` (``@1``), which both engines must refuse."""
    readable = [*defined, "match", "matchend", *anchors]
    if draw(st.integers(0, 9)) == 0:
        readable.append(draw(st.sampled_from(["b" if "a" in defined else "a", "target", "keyword"])))

    def comparison(label: str) -> str:
        if draw(st.integers(0, 7)) == 0:  # the label alone: set (CQP's existence test; issue 50)
            read = ["", "", f".{VOCAB.region_attribute}", *(f".{a}" for a in VOCAB.attributes)]
            return f"{draw(st.sampled_from(['', '!']))}{label}{draw(st.sampled_from(read))}"
        if draw(st.integers(0, 5)) == 0:  # numbers: CQP's functions of positions and values
            relation = draw(st.sampled_from(["=", "!=", "<", ">", "<=", ">="]))
            other = draw(st.sampled_from(readable))
            numbers = [f"distabs({label}, {other})", f"distance({other}, {label})"]
            if label in ("match", "matchend"):  # CQP stops the whole query at f() of an unset label
                numbers.append(f"f({label}.{draw(st.sampled_from(VOCAB.large))})")
            number = draw(st.sampled_from(numbers))
            return f"{number} {relation} {draw(st.integers(0, 4))}"
        operator = draw(st.sampled_from(["=", "!="]))
        if draw(st.booleans()):
            attribute = draw(st.sampled_from([*VOCAB.attributes, VOCAB.region_attribute]))
            other = f"{draw(st.sampled_from(readable))}.{draw(st.sampled_from([attribute, *VOCAB.attributes]))}"
            return f"{label}.{attribute} {operator} {other}"
        if label in ("match", "matchend"):
            attribute = draw(st.sampled_from([*VOCAB.attributes, VOCAB.region_attribute]))
        else:
            # a label may be unset, and CQP then decides `a.pos = "N.*"` by how it compiled the value
            # (an id list over a small lexicon, maybe inverted: see unset-label-value)
            attribute = draw(st.sampled_from([*VOCAB.attributes, VOCAB.region_attribute]))
        if attribute == VOCAB.region_attribute:
            value = draw(st.sampled_from(VOCAB.region_values))
        elif label in ("match", "matchend"):
            value = draw(values(attribute))
        else:
            value = f'"{draw(st.sampled_from(VOCAB.regexes[attribute]))}"{draw(FLAGS)}'
        return f"{label}.{attribute} {operator} {value}"

    labels = defined or [draw(st.sampled_from(readable))]
    parts = [comparison(label) for label in labels] + [comparison(draw(st.sampled_from(readable)))] * draw(
        st.integers(0, 1)
    )
    joined = f" {draw(st.sampled_from(['&', '|']))} ".join(parts)
    return f"!({joined})" if draw(st.integers(0, 5)) == 0 else joined


@st.composite
def cases(draw: st.DrawFn) -> Case:
    strategy: Strategy = draw(st.sampled_from(["standard", "shortest", "longest", "traditional"]))
    query = draw(patterns())
    # every candidate of a long repetition may run to the end of a text or to the HardBoundary
    long_runs = unbounded_text(query)
    defined = sorted(set(re.findall(r"\b([ab]):", query)))  # no generated value contains a colon
    if defined and draw(st.integers(0, 2)) == 0:
        # a token that reads a label set before it in the text (on some path, or on none)
        label = draw(st.sampled_from(defined))
        attribute = draw(st.sampled_from([*VOCAB.attributes, VOCAB.region_attribute]))
        other = draw(st.sampled_from([attribute, *VOCAB.attributes]))
        own = attribute if attribute in VOCAB.attributes else f"_.{attribute}"
        read = f"{own} {draw(st.sampled_from(['=', '!=']))} {label}.{other if own != attribute else attribute}"
        query += f" [{read}{draw(st.sampled_from(['', '', f' & {draw(attribute_tests())}']))}]"
    if defined or draw(st.integers(0, 3)) == 0:
        marked = [name for name, found in (("target", re.search(r"@(?!1)", query)), ("keyword", "@1" in query))
                  if found]
        query += f" :: {draw(constraints(defined, marked))}"
    if draw(st.booleans()):
        regions = ["s", "s", "2 s", "left s"] if long_runs else [*VOCAB.within, "2 s", "right s", "5", "12"]
        query += f" within {draw(st.sampled_from(regions))}"
    if draw(st.integers(0, 9)) == 0:
        query += f" cut {draw(st.integers(0, 20))}"  # cut 0: no cut
    if draw(st.integers(0, 9)) == 0:
        query += f" {draw(st.sampled_from(['expand to s', 'expand left to s', 'expand right to 2 s', 'expand to 3']))}"
    boundaries = [20, 3] if long_runs else [500, 20, 3]
    return Case(query, strategy, 500 if " within " in query else draw(st.sampled_from(boundaries)))


# Pieces of regexes where PCRE (UTF-8 and UCP, as CQP compiles them, anchored to the whole value)
# and Python's regex module could disagree: classes, Unicode properties, anchors, escapes, groups,
# multibyte characters (the EWT lexicon has é, ’, ³, Υ, ♥, £, a soft hyphen). Pieces that are
# known to disagree were each written down as a case (FIXED_DIFFERENCES once fixed).
REGEX_PIECES = [
    "a", "e", "n", "t", "s", "T", "é", "É", "ç", "’", "—", "Υ", "´", "³", ".", ".*", ".+", "..", ".?",
    "[a-z]", "[^a-z]", "[A-Z]", "[aeiou]", "[é-ü]", "[’']", "[[:alpha:]]", "[[:upper:]]", "[[:lower:]]",
    "[[:digit:]]", "[[:space:]]", "[^[:alpha:]]", "\\d", "\\D", "\\s", "\\S", "\\b", "\\B", "\\h", "\\X",
    "\\p{L}", "\\P{L}", "\\pL", "\\p{P}", "\\p{Pi}", "\\p{Pf}", "\\p{Pd}", "\\p{S}", "\\p{Sc}", "\\p{N}",
    "\\p{No}", "\\p{Greek}", "\\p{Latin}", "\\p{Cf}", "\\p{L&}", "\\p{Any}", "\\p{Han}",
    "^", "$", "\\A", "\\z", "\\.", "\\-", "\\'", "\\x41", "\\101", "\\t", "\\/", "\\_", "\\$", "\\%",
    "(a|e)", "(?:s|es)", "(?i)", "(?i:t)", "(?>a+)", "a*+", "a++", "s{2}", "{1}", "(.)\\1", "(?=a)", "(?!e)", "(?<=n)",
    "(?|a|e)", "(?#x)", "(?P<n>s)(?P<m>e)", "(?s).", "(?x) a", "s{2,1}", "[z-a]", "x**", "|", ")", "(", "[", "]",
    "\\K", "\\R", "\\v", "\\G", "\\f", "\\0",
    # once read differently by PCRE and Python's regex (FIXED_DIFFERENCES), and their neighbours
    "\\w", "\\W", "[\\w.]", "[^\\W]", "[\\d\\s]", "[[:punct:]]", "[[:alnum:]]", "[[:word:]]", "[[:graph:]]",
    "[[:print:]]", "[[:xdigit:]]", "[[:^alpha:]]", "[[:cntrl:]]", "\\p{Lu}", "\\p{Ll}", "[\\p{Lu}a]", "[^\\p{Ll}]",
    "\\p{^L}", "\\p{Xan}", "\\p{Xwd}", "\\p{Xsp}", "\\x{e9}", "\\o{145}", "\\Q.\\E", "\\Q", "\\E", "\\N",
    "{,2}", "[[:<:]]", "[[:>:]]", "\\8", "\\y", "\\Z", "[\\Z]", "\\e", "\\cA", "\\145", "\\g{-1}", "\\g1",
    "(?<n>a)", "\\k<n>", "[a-\\d]", "[]a]", "[^]a]", "(?x) a b", "(?i)\\p{Lu}", "[É-é]", "\\x{2019}", "(?-i)",
]  # fmt: skip


def mu_terms() -> st.SearchStrategy[str]:
    """MU's single-token patterns combined with (meet A B window) and (union A B)."""
    window = st.one_of(
        st.tuples(st.integers(-4, 4), st.integers(-4, 4)).map(lambda w: f" {w[0]} {w[1]}"),
        st.sampled_from(["", " s", f" {VOCAB.within[-1]}"]),
    )
    return st.recursive(
        tokens(),
        lambda inner: st.one_of(
            st.tuples(inner, inner, window).map(lambda t: f"(meet {t[0]} {t[1]}{t[2]})"),
            st.tuples(inner, inner).map(lambda t: f"(union {t[0]} {t[1]})"),
        ),
        max_leaves=3,
    )


@st.composite
def cooccurrence_cases(draw: st.DrawFn) -> Case:
    """CQP's MU queries (``MU (meet A B -2 3) cut 5``) and TAB queries (``TAB A {0,2} B within s``)."""
    if draw(st.booleans()):
        cut = f" cut {draw(st.integers(1, 20))}" if draw(st.integers(0, 4)) == 0 else ""
        return Case(f"MU {draw(mu_terms())}{cut}")
    gaps = st.sampled_from(["", "", "?", "*", "+", "{1}", "{0,2}", "{,3}", "{2,}"])
    # CQP lists a TAB column that compares two attributes, reads a region or calls lbound() by testing
    # every position, and stops at once unless a query before left its EvaluationIsRunning flag set
    # (an MU query does, a pattern query clears it): its answer depends on the query before
    plain = tokens().filter(lambda token: not re.search(r"\w !?= \w|_\.|bound\(", token))
    columns = [draw(plain) for _ in range(draw(st.integers(1, 4)))]
    text = columns[0] + "".join(f" {draw(gaps)} {column}".replace("  ", " ") for column in columns[1:])
    within = draw(st.sampled_from(["", "", " within s", " within 2 s", " within 5", f" within {VOCAB.within[-1]}"]))
    return Case(f"TAB {text}{within}", hard_boundary=draw(st.sampled_from([500, 20])))


@st.composite
def regex_cases(draw: st.DrawFn) -> Case:
    pattern = "".join(draw(st.lists(st.sampled_from(REGEX_PIECES), min_size=1, max_size=4)))
    attribute = draw(st.sampled_from(["word", "word", "lemma"]))
    return Case(f'[{attribute}="{pattern}"{draw(FLAGS)}]')


# ---------------------------------------------------------------------------- the tests


Test = Callable[..., None]


def generated(drawn: st.SearchStrategy[Case], share: int = 1) -> Callable[[Test], Test]:
    """A generated test: slow, given cases ``drawn``, ``1/share`` of the examples asked
    (``bench/differential.py`` divides by the same) and ``HANG`` as its time limit."""

    def mark(test: Test) -> Test:
        examples = settings(SETTINGS, max_examples=max(1, EXAMPLES // share))
        marked: Test = pytest.mark.timeout(HANG)(pytest.mark.slow(examples(given(case=drawn)(test))))
        return marked

    return mark


@st.composite
def german(draw: st.DrawFn, drawn: st.SearchStrategy[Case]) -> Case:
    """A case of ``drawn`` made of GERMAPARL1386's words, tags and regions."""
    with vocabulary(GERMAPARL_WORDS):
        return draw(drawn)


@generated(cases())  # every generated query, on real CQP too: about 3 minutes here
def test_native_engine_agrees_with_real_cqp(ewt: NativeEngine, judge: RealCqp, case: Case) -> None:
    check(ewt, judge, case)


@generated(cases(), share=2)
def test_native_engine_on_a_compressed_corpus_agrees_with_real_cqp(
    compressed_ewt: NativeEngine, judge: RealCqp, case: Case
) -> None:
    check(compressed_ewt, judge, case)


@generated(german(cases()), share=2)
def test_native_engine_on_german_agrees_with_real_cqp(
    germaparl: NativeEngine, germaparl_judge: RealCqp, case: Case
) -> None:
    check(germaparl, germaparl_judge, case)


@st.composite
def marked_run_cases(draw: st.DrawFn) -> Case:
    """``marked_runs`` under every strategy, the labels read at the match end or alone, within s."""
    query = draw(marked_runs())
    strategy: Strategy = draw(st.sampled_from(["standard", "shortest", "longest", "traditional"]))
    if "a:" in query:
        relation = draw(st.sampled_from(["=", "!="]))
        attribute, other = draw(st.sampled_from(VOCAB.attributes)), draw(st.sampled_from(VOCAB.attributes))
        read = draw(st.sampled_from([f"a.{attribute} {relation} matchend.{other}", "a", "!a", f"a.{attribute}",
                                     f"distabs(a, matchend) > {draw(st.integers(1, 4))}"]))
        query += f" :: {read}"
    return Case(f"{query} within s", strategy)


@generated(marked_run_cases(), share=4)  # CQP takes seconds on some (runs of [] within s): a quarter of the examples
def test_anchors_and_labels_on_repeated_items_agree_with_real_cqp(
        ewt: NativeEngine, judge: RealCqp, case: Case) -> None:
    check(ewt, judge, case)


@pytest.mark.parametrize("query", [
    '@[pos="PPER"]* [pos="PPER"]? [pos="VVINF"] within s',  # 27 of 3,248 targets differed
    '[word="daß"%c] [pos="PPER"]', '[lemma="schließen"] | [word=".*ß.*"%d]', '[_.text_party="SPD"] [pos="NN"]',
])  # fmt: skip
def test_german_cases_agree_with_real_cqp(germaparl: NativeEngine, germaparl_judge: RealCqp, query: str) -> None:
    check(germaparl, germaparl_judge, Case(query))


@generated(cooccurrence_cases(), share=2)
def test_mu_and_tab_queries_agree_with_real_cqp(ewt: NativeEngine, judge: RealCqp, case: Case) -> None:
    check(ewt, judge, case)


@generated(german(cooccurrence_cases()), share=4)
def test_mu_and_tab_queries_on_german_agree_with_real_cqp(
    germaparl: NativeEngine, germaparl_judge: RealCqp, case: Case
) -> None:
    check(germaparl, germaparl_judge, case)


@generated(regex_cases())
def test_regexes_agree_with_real_cqp(ewt: NativeEngine, judge: RealCqp, case: Case) -> None:
    check(ewt, judge, case)


@pytest.mark.parametrize(("query_id", "query"), parity_queries())
def test_judge_reproduces_the_parity_hits(judge: RealCqp, query_id: str, query: str) -> None:
    """The judge itself: real CQP through it answers the 44 parity queries as the reference files say."""
    assert judge.query(query) == parity_hits(query_id)


def fixed(name: str, query: str, reason: str, strategy: Strategy = "standard", hard_boundary: int = 500) -> object:
    return pytest.param(Case(query, strategy, hard_boundary), id=name)


def recorded(named: list[object]) -> Callable[[Test], Test]:
    """A test of the ``named`` cases (``fixed``), five minutes at the most."""

    def mark(test: Test) -> Test:
        return pytest.mark.timeout(300)(pytest.mark.parametrize("case", named)(test))

    return mark


# Differences the generators found and that are fixed: each stays as a regular parity case.
# Regexes: CQP compiles them with PCRE (UTF-8, UCP); the native engine translates them for Python's
# regex module (query_lang/cowbird/query/pcre.py), and each of these once read differently.
FIXED_DIFFERENCES = [
    # -- where paths meet in one state: CQP's own DFA and simulation (dfa.py, dfa_simulate.py)
    fixed("anchor-in-loop-longest",
          "[word='the']? (a:[] @[]* [(!(word='th.*'))]?) [word='th.*'] [] | [word='a|an|the'] "
          ':: a.word = ".*ing" within s',
          "with the longest strategy CQP goes on after a winner and its states overwrite each other's "
          "labels and anchors in DFA state order; native keeps the first path's: the same 2,381 hits, "
          "2,053 targets one token apart (CQP 413-419 target 416, native 417)", "longest"),
    fixed("anchor-in-loop-longest-2", "@[word='th.*'] [word='th.*'] | @[]* [word='th.*']* 'th.*' "
          ":: !(match.word = 'th.*') expand to s",
          "as anchor-in-loop-longest, without labels: 77 targets differ (some still do at a hard boundary of "
          "20 tokens, which keeps the case to a second: at 500 CQP takes half a minute)", "longest", 20),
    # issue 50: an outside fuzzer's finds; the same under every strategy
    fixed("anchor-on-a-run-standard", '@[]* []+ [pos="NNP"] within s',
          "paths through the anchored run and around it meet in one DFA state: CQP keeps the target "
          "its state order writes last (0-6 target 0), native marked the last token of the run (4); "
          "7,110 of 14,205 targets differed"),
    fixed("keyword-on-an-optional-run", '@1[]{0,2} []? [upos="PUNCT"]',
          "as anchor-on-a-run-standard, for the keyword: 2,478 of 29,767 keywords differed"),
    fixed("anchor-on-an-optional-token", """[] @[]? []* [pos="(VBG|-RRB-|'')"] within s""",
          "CQP leaves the target unset where the path around the optional token wins; native set it"),
    fixed("label-on-a-run-at-matchend", "a:[]+ []+ :: a.lemma = matchend.lemma within s",
          "CQP tests the label's value its DFA state holds (one per state); native tested every value "
          "the label took on some path: CQP 28,213 hits, native 4,765"),
    fixed("label-on-a-bounded-run", 'a:[upos="PUNCT"]{1,3} []+ [upos="PUNC[BJMT]?"] '
          ":: a.lemma != matchend.lemma within s", "as label-on-a-run-at-matchend: CQP 10,301, native 10,206"),
    fixed("a-label-alone", 'a:"at" :: a', "CQP's existence test (a label alone): 944 hits; native refused it"),
    fixed("a-label-alone-optional", 'a:[pos="DT"]? [pos="NN"] :: !a | a.text_id',
          "the existence test on an optional token, negated, and of an s-attribute's value"),
    fixed("tag-is-a-step", "[] (</s> | []) []",
          "CQP's simulation takes one step per transition, a tag included, and stops at the first final "
          "state reached in step order: at 23 (sentence end) [] [] [] and [] </s> [] tie at 3 steps and "
          "CQP takes 23-25; native counts tokens and takes 23-24; 254,816 vs native 238,967 hits"),
    fixed("tag-is-a-step-tie", "[] ([] [] | </s> [])",
          "as tag-is-a-step: a tie in steps is decided by CQP's state order: CQP 23-25, 56-58, ...; "
          "native 23-24, 56-57, ... (16,621 of 254,816 hits differ)", "traditional"),
    fixed("tag-is-a-step-longest", '([]? [word="[A-Z].*"]{2} <s>?)+',
          "CQP keeps one corpus position per state and step, and a tag does not advance it: paths that "
          "the optional <s> puts out of step overwrite each other, so CQP's longest match from 397 ends "
          "at 408 (and 405-409 is a hit of its own); native finds 397-409: 6,289 vs native 6,222 hits",
          "longest"),
    fixed("strict-regions-in-text-order", '<s> [pos="DT"] | [pos="NN"] </s>',
          "CQP ties a closing tag to the region label of an opening tag written before it in the query "
          "text (parse_actions.c, StrictRegions), so </s> in the second alternative never matches: "
          "1,803 hits; native checks </s> only on paths that entered <s>: 2,541 (208-208 first extra)"),
    # -- checks of the whole query (query_lang/cowbird/query/cqp_build.py): CQP refuses these, or accepts them
    fixed("unread-label", 'a:[word="the"]',
          "CQP refuses a label that no constraint reads (\"Illegal use of labels\"); native runs it: 9,872 hits"),
    fixed("target-without-marker", '[pos="NN"] :: !(target.upos = "NOUN")',
          "CQP refuses target in a constraint when no token has @ (\"Label target used before it was "
          "defined\"); native runs it: 33,591 hits"),
    fixed("two-targets", '@[pos="DT"] @[pos="NN"]',
          "native refuses a second @ (QuerySyntaxError); CQP accepts it: 10,133 hits"),
    fixed("two-targets-last-wins", '@[pos="DT"] @[pos="NN"] :: target.word = "the"',
          "with two @ on a path, target is the last one set (the noun): CQP 0 hits"),
    fixed("keyword-and-target", '@1[pos="JJ"] @[pos="NN.*"]',
          "native once refused @1 (CQP's keyword anchor); CQP: 6,468 hits, each with target and keyword"),
    fixed("keyword-in-constraint", '@1[pos="DT"] [pos="JJ"]? @0:[pos="NN"] :: keyword.word = "the"',
          "CQP reads the keyword in a constraint like target"),
    fixed("optional-keyword-longest", '[pos="DT"] @1[pos="JJ"]* [pos="NN.*"]',
          "a path without the @1 token leaves the keyword unset (-1)", "longest"),
    fixed("unused-anchor-number", '@2[pos="DT"] @9:[pos="NN"]', "CQP ignores @2 to @9: 10,133 hits, no anchors"),
    fixed("zero-repetition", '[pos="DT"] [pos="JJ"]{0} [pos="NN"]',
          "native refuses {0} (QuerySyntaxError: count between 1 and 1,000); CQP accepts it: 10,133 hits"),
    fixed("label-on-zero-repetition", 'a:[]{0} [] :: a.word != "TIME"%cd',
          "a label on an item repeated {0} is never set: the node crashed (KeyError 'a'); CQP: 0 hits"),
    fixed("label-on-zero-repetition-longest",
          'a:[]{0} b:[] :: a.word = "\\W+" | b.word != matchend.lemma | a.upos = "SYM"',
          "the node crashed (KeyError 'a'); CQP: 56,570 hits with the longest strategy", "longest"),
    fixed("value-ends-in-backslash-pair", '[word="\\\\\\\\"]',
          "the lexer refused a value ending in an escaped backslash; CQP finds the token \\\\ (1 hit)"),
    fixed("literal-backslash-pair", '[word="\\\\"%l]', "as above, literally: CQP 1 hit"),
    fixed("cut-0", '[pos="DT"] [pos="NN"] cut 0', "native refused cut 0; for CQP it is no cut: 10,133 hits"),
    # -- the current position '_' in a token: an s-attribute's value of the token's region
    fixed("this-region-value", '[_.text_year="2007"]', "native refused _.x in a token; CQP: 209 hits"),
    fixed("this-region-value-negated", '[_.text_year!="2007" & pos="NN"]', "the other years' nouns"),
    fixed("this-region-value-not", '[pos="NN" & !(_.text_genre="email")] [_.text_genre="answers"%c]',
          "CQP: nouns outside e-mails, then a token of an answers text"),
    fixed("this-region-value-in-sequence", '[pos="DT"] [_.s_id=".*-000[1-3]"] [pos="NN"]',
          "a test on an attribute with a value per sentence, inside a sequence"),
    # -- attribute comparisons and region bounds in a token
    fixed("attribute-comparison", '[word = lemma]', "native refused; CQP: 198,248 hits"),
    fixed("attribute-comparison-negated", '[word != lemma] [pos="NN"]', "CQP compares the strings of the token"),
    fixed("attribute-comparison-mixed", '[pos="VB.*" & word != lemma & !(upos = pos)]',
          "comparisons inside Boolean tests"),
    fixed("label-in-token", 'a:[pos="DT"] [] [lemma = a.lemma]', "native refused labels in a token; CQP: 65 hits"),
    fixed("label-in-token-left", 'a:[] [a.pos = "NN"]', "a label on the left: the token after each noun; CQP 33,591"),
    fixed("label-in-token-unset", "a:[]? [word = a.word]", "the skipped label is unset, as in a constraint: CQP 160"),
    fixed("label-in-token-unset-not", "a:[]? [pos != a.pos]", "an unset label compares false: CQP 242,684"),
    fixed("label-in-token-region", "a:[] [_.text_id = a.text_id]", "an s-attribute at two positions: CQP 253,644"),
    # -- a label or an anchor between parts of variable length: one match may have it at several
    # positions, and CQP's DFA chooses (found at the 1,904th GERMAPARL1386 query of the seeded
    # 5,000 run, under longest: native marked the match's last token, CQP an earlier one)
    fixed("anchor-between-repetitions", "[]* @[] []*", "CQP: the target at start + 1 (native: the match's end)",
          "longest", 20),
    fixed("keyword-between-repetitions", '[pos="JJ"]* @1[pos="JJ"] [pos="JJ"]* [pos="NN.*"]',
          "8,514 hits, the keyword on another JJ of the run at #365", "longest"),
    fixed("anchor-between-tags-and-repetitions", '<s> []* @[pos="VB.*"] []* </s>',
          "CQP marks the sentence's first verb, native marked its last", "longest"),
    fixed("label-between-repetitions", '[]* a:[pos="JJ"] []* [pos="NN.*"] :: a.word = "good" within s',
          "the label's value decides the hit: native 372 hits, CQP 305", "longest"),
    fixed("label-between-repetitions-any", '[]* a:[] []* [word="."] :: a.pos = "DT" within s',
          "native 10,930 hits, CQP 9,572", "longest"),
    fixed("label-in-token-loop", 'a:[pos="JJ"]+ [pos = a.pos]', "the label of the last JJ of the loop: CQP 767"),
    fixed("label-in-token-paths",
          '(a:[pos="DT"] | a:[pos="PRP\\$"]) [pos="JJ"]* [lemma != a.lemma & pos="NN.*"] :: a.word = "the|my"',
          "a label set on either path, read in a token and in the constraint: CQP 9,656"),
    fixed("label-in-token-within", "a:[] []* [word = a.word] within s", "a word repeated in its sentence: CQP 23,417"),
    fixed("label-in-token-match", 'a:[] [match.pos = a.pos]', "match is the start: CQP 254,817"),
    fixed("label-in-token-initial", 'a:[]? [a.pos = "NN"]',
          "a label on the left in a token a match may start with: both refuse (CQP: \"Reference to label 'a' not "
          "allowed in query initial position\")"),
    fixed("label-in-token-initial-this", "a:[]? [_.word = a.word]",
          "'_' is a label to CQP: both refuse; [word = a.word] is not one: 160 hits (label-in-token-unset)"),
    fixed("label-in-token-lookahead", 'a:[pos="IN"] [:upos != a.upos :] []', "a lookahead reads a label: 25,005"),
    fixed("label-in-token-longest", '@[pos="DT"] a:[pos="JJ"]* [pos = a.pos | lemma = a.lemma]',
          "labels and anchors under longest", "longest"),
    fixed("lbound", '[lbound(s) & pos="DT"]', "native refused lbound(); CQP: 1,803 hits"),
    # -- MU and TAB queries (engines/native/cooccurrence.py): once refused by both engines
    fixed("mu-meet", 'MU (meet [pos="JJ"] [pos="NN"] -2 2)', "adjectives with a noun at most two away: CQP 8,068"),
    fixed("mu-meet-default", 'MU (meet [pos="JJ"] [pos="NN"])', "the window 1 1: a noun right after, CQP 5,858"),
    fixed("mu-meet-region", 'MU (meet [pos="JJ"] [pos="NN"] s)', "a noun in the same sentence: CQP 13,383"),
    fixed("mu-union-cut", 'MU (meet (union [pos="JJ"] [pos="RB"]) [pos="NN"] 1 3) cut 10', "CQP: the first 10"),
    fixed("mu-nested", 'MU (meet "the" (meet [pos="JJ"] [pos="NN"] 1 1) 1 1)', "CQP: 1,015"),
    fixed("mu-negative-window", 'MU (meet "the" "house" -5 -1)', "a window before: CQP 6"),
    fixed("mu-window-before-the-corpus", 'MU (meet [pos="DT"] [pos="NN"] -3 -1)',
          "CQP does not clamp a window that reaches before position 0: the first DT finds nothing (6,439)"),
    fixed("mu-any", 'MU (meet [] "the" 1 1)', "[] gives CQP's MU an empty list: 0 hits"),
    fixed("mu-negated", 'MU (meet [pos!="NN"] "the" 1 1)', "a negated test is its complement: CQP 9,771"),
    fixed("tab", 'TAB [pos="DT"] [pos="JJ"] [pos="NN"]', "three adjacent columns: CQP 2,728"),
    fixed("tab-gaps", 'TAB [pos="DT"] {0,2} [pos="NN"]', "the nearest noun one to three on: CQP 14,786"),
    fixed("tab-open", 'TAB [pos="DT"] + [pos="NN"]', "an open distance ends at the HardBoundary: CQP 16,000"),
    fixed("tab-within", 'TAB [pos="IN"] {1,5} [pos="DT"] * [pos="NN"] within s', "CQP: 5,084"),
    fixed("tab-any", 'TAB [] [pos="NN"]', "both refuse [] in a TAB column"),
    fixed("rbound", '[pos="NN"] [rbound(s)]', "native refused rbound(); CQP: 5,031 hits"),
    fixed("not-lbound", '[!lbound(text)] [lbound(text)]', "CQP: a text's first token and the token before it"),
    # -- lookahead constraints: a test of the next token that does not consume it
    fixed("lookahead", '[pos="JJ"] [:pos="NN":]', "native refused [: ... :]; CQP: 5,858 one-token hits"),
    fixed("lookahead-inside", '[pos="DT"] [:pos="JJ":] [] [pos="NN"]', "CQP: 2,728 hits"),
    fixed("lookahead-any", '[pos="JJ"] [::]', "[::] looks at any next token; CQP: 14,776 hits"),
    fixed("lookahead-first", '[:pos="DT":] [] [pos="NN"]', "a lookahead first: CQP 10,133 hits"),
    fixed("lookahead-past-the-end", "[] [:!word='d.*':]",
          "at the last token a lookahead looks past the corpus end, where CQP finds every value test false "
          "and its negation true: CQP 249,159, native once 249,158"),
    fixed("lookahead-past-the-end-not-equal", "[] [:word!='d.*':]", "word!= is a test of its own: false there"),
    fixed("lookahead-past-the-end-any", "[] [::]", "[::] holds past the end: CQP 254,818"),
    fixed("lookahead-past-the-end-bound", "[] [:!lbound(s) & !(word=lemma):]", "CQP: 238,197"),
    fixed("lookahead-past-the-end-german",
          "@a:[word='d.*'] | (@[!word='d.*'] [:!word='d.*':]) :: distabs(a, a) = 0",
          "found on GERMAPARL1386 (its last token): the same on EWT"),
    fixed("lookahead-past-the-end-constant", '[!word="the"] [word="it"]? [:!(upos="[A-Z]+"%c):]',
          "CQP compiles upos=\"[A-Z]+\"%c (every value of a small lexicon) to a constant true: its negation fails "
          "past the end too, as for an unset label (found at the 1,848th EWT query: native once 1 hit, CQP 0)"),
    fixed("lookahead-past-the-end-inverted", '[] [:upos="PUNCT|NOUN|VERB|DET|ADP|PRON|AUX|ADV|ADJ":]',
          "an id list over more than half the corpus is inverted, and an inverted list passes past the end"),
    fixed("lookahead-past-the-end-absent", '[] [:upos!="XYZ":]', "a string absent from the lexicon: != is constant"),
    fixed("lookahead-target", '[pos="DT"] @[:pos="NN":]', "a target on a lookahead is the token looked at"),
    fixed("lookahead-label", 'a:[pos="DT"] b:[:pos="NN":] :: b.word="house" & a.word="the"',
          "a label on a lookahead is the token looked at"),
    # -- zero-width items repeated: a tag (or lookahead) repeated at one position is reached once
    fixed("repeated-tag", '[] <text>+', "native refused (\"would loop forever\"); CQP: 1,173 hits"),
    fixed("repeated-tag-pair", '"." (</s> <s>)+ []', "native refused; CQP: 13,338 hits"),
    fixed("repeated-lookahead", '[pos="NN"] [:pos="NN":]+', "native refused; CQP: 3,869 hits", "shortest"),
    # -- anchors and labels on optional and repeated tokens next to tokens that match the same
    fixed("target-on-optional", '[pos="DT"] @[pos="JJ"]? [pos="JJ"]? [pos="NN"]',
          "on every DT-JJ-NN hit CQP puts the target on the JJ; native left it unset"),
    fixed("keyword-on-repetition", '@1[]* [upos="PRON"]? [upos="VERB"]', "5,609 of 27,888 keywords differed"),
    fixed("label-on-repetition", '[pos="DT"] a:[pos="JJ"]+ [pos="JJ"]* [pos="NN"] :: a.word = "big"',
          "CQP 27, native 26"),
    fixed("constraint-per-path", 'b:[]{1,2} a:[]{1,2} [pos="."] :: a.word != b.word',
          "CQP evaluates the global constraint on every transition into a final state, so any path whose "
          "labels satisfy it makes the match; native merged the paths' labels first: 88 of 24,574 hits "
          "differed, CQP 2870-2873 vs native 2871-2873"),
    # -- numbers in the global constraint: CQP's functions of positions and values
    fixed("distabs", 'a:[] [] b:[] :: distabs(a,b) = 2', "native refused functions; CQP: 254,816 hits"),
    fixed("distabs-match", '[pos="DT"] []{0,3} [pos="NN"] :: distabs(match, matchend) > 2', "CQP: 5,033 hits"),
    fixed("distance-within", 'a:[pos="JJ"] []* b:[pos="NN"] :: distance(a, b) <= 2 within s', "CQP: 6,353 hits"),
    fixed("frequency", 'a:[pos="NN"] :: f(a.word) < 3', "f(): the value's corpus frequency; CQP: 4,539 hits"),
    fixed("int-range", 'a:[pos="CD"] :: int(a.word) >= 1990 & int(a.word) <= 2010', "CQP: 368 hits"),
    fixed("int-not-a-number", 'a:[pos="CD"] :: int(a.word) != 5', "a value that is no number compares false"),
    fixed("dist-unset-label", '@[pos="DT"] a:[]? [pos="NN"] :: dist(target, a) = 1',
          "to distance(), an unset label is position -1; CQP: 4,991 hits"),
    fixed("distabs-unset-label", '[word="th.*"] | @a:[word="th.*"] :: !(distabs(a, a) = 0)',
          "distabs(a, a) is 0 with a unset too: CQP 0 hits (native once answered 8,586)"),
    fixed("distance-to-a-number", 'a:[pos="DT"] [] :: distance(a, 1000) < 0', "a position as a number"),
    fixed("int-of-a-region-value", '[pos="NN"] :: int(match.text_year) > 2008', "CQP: 6,696 hits"),
    fixed("empty-first-accept", "<s> []?",
          "CQP ends a start at its first accepting state even when no token was consumed, and then drops "
          "the empty match (eval.c: winner < start): 0 hits; native went on to <s> []: 16,622 hits"),
    fixed("empty-first-accept-shortest", '<s> [pos="DT"]? [pos="NN"]?', "as above", "shortest"),
    fixed("empty-first-accept-longest", "<s> []?", "the longest strategy goes on: 16,622 hits", "longest"),
    fixed("unset-label-value", '[pos="DT"] | a:[pos="NN"] :: a.pos = "[A-Z]{2}"',
          "CQP compiles a regex over a small lexicon (< 1000 types) into an id list, inverted when it "
          "covers more than half of the tokens, and an unset label passes an inverted list: 54,349 hits "
          "incl. every DT; native once failed every comparison of an unset label, 33,591"),
    fixed("unset-label-absent-literal", '[pos="DT"] | a:[pos="NN"] :: a.word != "qqqq"',
          "!= with a plain string absent from the lexicon is true, for an unset label too"),
    fixed("unset-label-regex-all", '[pos="DT"] | a:[pos="NN"] :: a.upos = ".*"',
          "a regex matching every type of a small lexicon is a constant: true for an unset label"),
    fixed("unset-label-large-lexicon", '[pos="DT"] | a:[pos="NN"] :: a.word != "th.*"',
          "a regex over a large lexicon: an unset label fails, = and != alike"),
    # -- contexts: within and expand with numbers of regions or tokens and directions
    fixed("within-2-s", '[pos="DT"] []* [word="house"] within 2 s',
          "native refused within 2 s; CQP: the start's sentence and the next bound a match, 55 hits"),
    fixed("within-left-s", '[pos="DT"] []* [word="house"] within left s',
          "native refused a direction; CQP ignores it for within: 43 hits"),
    fixed("within-tokens", '[pos="DT"] []* [word="house"] within 3',
          "native refused within 3; CQP: at most 3 tokens after the start, 30 hits"),
    fixed("within-tokens-longest", '[pos="DT"] []* [pos="NN"] within 4 words',
          "within N words is within N; with the longest strategy", "longest"),
    fixed("within-0-s", '[pos="DT"] [pos="NN"] within 0 s', "CQP: no region to stay in, 0 hits"),
    fixed("expand-tokens", '[word="house"] expand to 3', "native refused expand to 3; CQP: 64 hits widened by 3"),
    fixed("expand-left-to-s", '[word="house"] expand left to s', "native refused expand left; CQP: 64 hits"),
    fixed("expand-right-to-s", '[word="house"] expand right to s', "native refused expand right; CQP: 64 hits"),
    fixed("expand-to-2-s", '[word="house"] expand to 2 s',
          "native refused expand to 2 s; CQP: the sentences before and after too, 61 hits after merging"),
    fixed("expand-right-tokens-with-target", '@[pos="DT"] [pos="NN"] expand right to 2',
          "anchors stay where they were"),
    fixed("matches-empty", '[pos="DT"]?',
          "CQP refuses a pattern that matches the empty string (\"Query matches empty string\"); native "
          "answers 0 hits without an error"),
    # -- regexes (query_lang/cowbird/query/pcre.py)
    fixed("caseless-property", '[word="\\p{Lu}"%c]',
          "with %c, regex makes \\p{Lu} and \\p{Ll} caseless, PCRE does not: native 9,746 hits, CQP 4,282"),
    fixed("ucp-word-numbers", '[word="\\w+"]',
          "PCRE's UCP \\w (and [[:alnum:]], [[:word:]]) take every \\p{N}, regex only \\p{Nd}: CQP also "
          "matches Ã³l at 236816 (218,239 vs native 218,238)"),
    fixed("posix-punct", '[word="[[:punct:]]"]',
          "PCRE's [[:punct:]] is \\p{P} plus ASCII symbols, regex's is \\p{P} and \\p{S}: native also "
          "matches ♥ at 3280 and £ at 112022, 165716 (29,395 vs CQP 29,392)"),
    fixed("brace-without-minimum", '[word="s{,2}"]',
          "PCRE1 reads {,2} as literal text, regex as {0,2}: native 229 hits, CQP 0"),
    fixed("backslash-N", '[word="\\N"]',
          "PCRE's \\N is any character but newline, regex's a literal N: native 7 hits, CQP 40,009"),
    fixed("word-start-class", '[word="[[:<:]]a"]',
          "PCRE's [[:<:]] is a word start, regex reads a character class: native 0 hits, CQP 4,567"),
    fixed("hex-brace-escape", '[word="d\\x{e9}cor"]',
          "regex refuses \\x{e9} (native: QuerySyntaxError); CQP: 1 hit, décor at 160375"),
    fixed("octal-brace-escape", '[word="\\o{101}"%c]', "regex refuses \\o{101}; CQP: 4,785 hits"),
    fixed("quoted-literal", '[word="\\Q.\\E"]', "regex refuses \\Q...\\E; CQP: 10,899 hits"),
    fixed("lone-end-quote", '[word="the\\E"]', "regex refuses a lone \\E, PCRE ignores it; CQP: 9,872 hits"),
    fixed("backslash-8", '[word="\\8"]', "regex refuses \\8 (no group 8), PCRE reads a literal 8; CQP: 32 hits"),
    fixed("escape-in-class", '[word="[\\Z]"]', "regex refuses \\Z in a class, PCRE reads Z; CQP: 3 hits"),
    fixed("unknown-escape", '[word="\\y"]', "regex refuses \\y, PCRE reads y; CQP: 2 hits"),
    fixed("pcre-property", '[word="\\p{Xan}+"]', "regex does not know \\p{Xan}; CQP: 218,201 hits"),
    fixed("group-reference-g", '[word="\\g1"]',
          "regex reads \\g1 as the text g1 (native 0 hits), PCRE refuses it (no group 1)"),
    fixed("duplicate-group-names", '[word="(?P<n>s)(?P<n>s)"]',
          "regex accepts two groups named n (native 0 hits), PCRE refuses them"),
]  # fmt: skip


# A global constraint that reads only ``match`` is tested on the candidate starts before any stepping
# (``RunSetup.split``): the same hits as CQP's test on every transition into a final state, under
# every strategy (standard's earliest start per end, longest's and shortest's containment), with
# ``cut`` counting the same starts, and with the simulations' fast paths it frees
START_CONSTRAINTS = [
    *(fixed(f"unbounded-gap-{strategy}", '[lemma="go"] []* [word="to"] :: match.text_genre="email"',
            "was 30 times slower than without the constraint on BIG50", strategy)
      for strategy in ("standard", "longest", "shortest", "traditional")),
    *(fixed(f"runs-{strategy}", '[pos="DT|JJ"]+ [pos="NN.*"]+ :: match.word = "the|a"%c',
            "starts inside another start's run: which one a strategy keeps depends on the failed starts",
            strategy) for strategy in ("standard", "longest", "shortest", "traditional")),
    fixed("same-end-earliest-start", '[]{1,3} [pos="NN"] :: match.pos = "DT" within s',
          "standard keeps the earliest start per end: a failed earlier start must not hide a later one"),
    fixed("negated-with-region", '<s> []{0,2} [pos="UH"] :: !(match.text_genre = "email") & match.s_id',
          "a region tag first, a negation and a region's existence"),
    fixed("fixed-chain", '[pos="JJ"] [pos="NN"] :: match.text_genre = "reviews|answers"',
          "a fixed chain: answered without stepping once the starts are filtered"),
    fixed("with-target", '@[pos="DT"] [pos="JJ"]* [pos="NN"] :: match.lemma = "the" & match.text_year != "2011"',
          "the target as without a constraint"),
    fixed("cut", '[pos="JJ"]+ [pos="NN.*"] :: match.text_genre = "reviews" cut 40',
          "cut counts the first 40 starts that pass"),
    fixed("expand", '[lemma="go"] []{0,4} [word="to"] :: match.text_genre = "newsgroup" expand to s',
          "expand after the filtered starts"),
]  # fmt: skip


# CQP's embedded modifier before a standard query sets the strategy for it, whatever the session's:
# each is run under another strategy than its own (Case's), so a modifier ignored is a difference
EMBEDDED_MODIFIERS = [
    fixed("modifier-traditional", '(?traditional) [pos="JJ"]+ [lemma="house"]',
          "every start of a run of adjectives: CQP 20 (18 under standard)", "longest"),
    fixed("modifier-longest", '(?longest) [pos="DT"] [pos="JJ"]* [pos="NN.*"]+', "CQP: the longest noun runs"),
    fixed("modifier-shortest", '(?Shortest) [pos="DT"] []{0,3} [pos="NN.*"] within s',
          "the modifier's name in any case, as CQP reads it", "traditional"),
    fixed("modifier-standard", '(?standard) a:[pos="JJ"]+ [pos="NN"] :: a.lemma != "new"',
          "a label in the run, under the modifier's strategy", "shortest"),
]  # fmt: skip


@recorded(FIXED_DIFFERENCES)
def test_fixed_differences(ewt: NativeEngine, judge: RealCqp, case: Case) -> None:
    check(ewt, judge, case)


@recorded(START_CONSTRAINTS)
def test_constraints_on_the_match_alone_agree_with_real_cqp(ewt: NativeEngine, judge: RealCqp, case: Case) -> None:
    check(ewt, judge, case)


@recorded(EMBEDDED_MODIFIERS)
def test_an_embedded_modifier_sets_the_strategy_as_in_cqp(ewt: NativeEngine, judge: RealCqp, case: Case) -> None:
    check(ewt, judge, case)
