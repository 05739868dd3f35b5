"""Good examples first you can check (issue 64, item 5): real nodes and a real front end over HTTP
(``tests/cluster.py``), on ``tests/fixtures/tricky.vrt`` in five partitions and on EWT in two. The
GDEX rules as ``docs/http-api.md`` writes them are written out here once more, in plain Python and
without cowbird (no ``cowbird.core.gdex``: characters by ``str`` methods and ``unicodedata``, URLs by
string search), over the tokens read from the VRT files; the hits of each query (their set from the
engine, in corpus order) sorted by those rules give exactly the order of ``sort=gdex``, and each hit's
``gdex`` in the preview and each GDEX column of the export hold exactly the scores and rule values
recomputed here."""

from __future__ import annotations

import io
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from tests.cluster import Cluster
from tests.frontend.conftest import TRICKY, Partitioned
from tests.support import TRICKY_VRT, require_reference

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]  # real node and front-end processes over HTTP

# -- the written rules (docs/http-api.md, "sort=gdex"), in plain Python --------------------------------

MIN_LENGTH, MAX_LENGTH, MAX_RARE, COMMON_WORDS = 10, 25, 3, 2_000
WEIGHTS = {"length": 2.0, "whole": 1.0, "rare": 2.0, "numbers": 1.0, "urls": 1.0, "brackets": 1.0, "edge": 1.0}
OPENERS, CLOSERS, JOINERS = "\"'“‘«„([", "\"'”’»)]", "'’-"
DOMAINS = ("com", "org", "net", "de", "uk", "info", "htm", "html", "php")


def letter(c: str) -> bool:
    return c.isalnum() and not c.isdecimal()


def of_letters(token: str) -> bool:
    """Letters, then any number of (one joiner, letters): ``don't``, ``well-known``; not ``'s`` or ``e-``."""
    groups, run = [], ""
    for c in token:
        if letter(c):
            run += c
        elif c in JOINERS:
            groups.append(run)
            run = ""
        else:
            return False
    groups.append(run)
    return all(groups)


def punctuation(c: str) -> bool:
    return unicodedata.category(c).startswith("P")


def number_or_symbol(token: str) -> bool:
    return any(c.isdigit() or not (c.isalnum() or punctuation(c)) for c in token)


def url(token: str) -> bool:
    lowered = token.lower()
    if "://" in token or lowered.startswith("www."):
        return True
    for i, c in enumerate(token):  # an @ with a dot after it, before any other @ or space
        if c == "@":
            for d in token[i + 1 :]:
                if d == "@" or d.isspace():
                    break
                if d == ".":
                    return True
    for domain in DOMAINS:  # .com … at the token's end or before a character that is not a word character
        at = lowered.find("." + domain)
        while at >= 0:
            after = at + 1 + len(domain)
            if after == len(token) or not (token[after].isalnum() or token[after] == "_"):
                return True
            at = lowered.find("." + domain, at + 1)
    return False


def balanced(tokens: list[str]) -> bool:
    counts = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    quotes = 0
    for token in tokens:
        for c in token:
            if c in counts:
                counts[c] += 1
            elif c in closing:
                counts[closing[c]] -= 1
            quotes += c == '"'
        if any(v < 0 for v in counts.values()):  # (token by token)
            return False
    return all(v == 0 for v in counts.values()) and quotes % 2 == 0


def rule_values(sentence: list[str], a: int, b: int, common: set[str]) -> dict[str, float]:
    n = len(sentence)
    first, last = sentence[0].lstrip(OPENERS), sentence[-1].rstrip(CLOSERS)
    rare = sum(of_letters(t) and t.lower() not in common for t in sentence)
    numbers = sum(number_or_symbol(t) for t in sentence)
    w = n - 1
    while w > 0 and all(punctuation(c) for c in sentence[w]):
        w -= 1
    return {
        "length": 1.0 if MIN_LENGTH <= n <= MAX_LENGTH else n / MIN_LENGTH if n < MIN_LENGTH else MAX_LENGTH / n,
        "whole": 1.0
        if first and (first[0].isupper() or first[0].isdigit()) and last.endswith((".", "!", "?", "…"))
        else 0.0,
        "rare": max(0.0, 1 - rare / MAX_RARE),
        "numbers": max(0.0, 1 - numbers / MAX_RARE),
        "urls": 0.0 if any(url(t) for t in sentence) else 1.0,
        "brackets": 1.0 if balanced(sentence) else 0.0,
        "edge": 1.0 if a > 0 and b < w else 0.0,
    }


def score_of(values: dict[str, float]) -> float:
    total = 0.0
    for name in ("length", "whole", "rare", "numbers", "urls", "brackets", "edge"):
        total += WEIGHTS[name] * values[name]
    return total / sum(WEIGHTS.values())


def key_of(score: float) -> int:
    return 1_000_000 - round(score * 1_000_000)


# -- the corpora, read from their VRT files --------------------------------------------------------


class Corpus:
    """The words of a VRT file and the sentence (``<s>``) of each token, read with plain Python as
    cwb-encode ``-x -B`` reads them; its common words as the rules define them."""

    def __init__(self, vrt: Path) -> None:
        self.words: list[str] = []
        self.sentence_of: list[int | None] = []
        self.sentences: list[tuple[int, int]] = []  # (first, last) token
        inside = False
        for raw in vrt.read_text(encoding="utf-8").split("\n"):
            line = unicodedata.normalize("NFC", raw)
            if not line.strip() or line.startswith("<?"):
                continue
            if line.startswith("<s ") or line == "<s>":
                inside = True
                self.sentences.append((len(self.words), len(self.words) - 1))
            elif line == "</s>":
                inside = False
            elif not line.startswith("<"):
                self.words.append(_entities(line.split("\t")[0].strip(" ")))
                self.sentence_of.append(len(self.sentences) - 1 if inside else None)
                if inside:
                    first, _ = self.sentences[-1]
                    self.sentences[-1] = (first, len(self.words) - 1)
        counted = Counter(self.words)
        top = sorted(counted.items(), key=lambda item: (-item[1], item[0]))[:COMMON_WORDS]
        self.common = {word.lower() for word, _ in top}

    def explain(self, position: int, matchend: int) -> tuple[int, dict[str, float] | None]:
        """A hit's key and its rule values (None outside any sentence: key 1,000,000)."""
        number = self.sentence_of[position]
        if number is None:
            return 1_000_000, None
        first, last = self.sentences[number]
        values = rule_values(self.words[first : last + 1], position - first, matchend - first, self.common)
        return key_of(score_of(values)), values


_ENTITY = re.compile(r"&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|(lt|gt|amp|quot|apos));")


def _entities(value: str) -> str:
    named = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
    return _ENTITY.sub(lambda m: chr(int(m[1], 16)) if m[1] else chr(int(m[2])) if m[2] else named[m[3]], value)


# -- the clusters ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tricky(tricky_five: Partitioned, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Corpus]]:
    ids = tricky_five.ids
    with _running(tmp_path_factory.mktemp("gdex-tricky"), tricky_five, TRICKY, [ids[:3], ids[3:]]) as url:
        yield url, Corpus(TRICKY_VRT)


@pytest.fixture(scope="module")
def ewt(ewt_parts: Partitioned, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Corpus]]:
    vrt = require_reference() / "ewt.vrt"
    with _running(tmp_path_factory.mktemp("gdex-ewt"), ewt_parts, "ewt", [[p] for p in ewt_parts.ids]) as url:
        yield url, Corpus(vrt)


@contextmanager
def _running(base: Path, parts: Partitioned, name: str, layout: list[list[str]]) -> Iterator[str]:
    cluster = Cluster(base, parts.registry, parts.manifest, name, layout).start()
    try:
        yield cluster.url
    finally:
        cluster.close()


# -- the checks -------------------------------------------------------------------------------------


def check_query(url: str, corpus: Corpus, name: str, q: str) -> int:
    """The order and scores of ``sort=gdex`` for ``q`` are the written rules' (returns the hits)."""
    with httpx.Client(base_url=url, timeout=120) as http:
        plain = http.get("/api/v1/export", params={"corpus": name, "q": q, "syntax": "cqp", "format": "csv"})
        assert plain.status_code == 200, plain.text
        hits = pd.read_csv(io.StringIO(plain.text), keep_default_na=False)
        expected = sorted(
            (corpus.explain(p, e)[0], p, e) for p, e in zip(hits["position"], hits["matchend"], strict=True)
        )
        assert len({key for key, _, _ in expected}) > 3  # the scores differ: the order says something
        exported = http.get(
            "/api/v1/export",
            params={"corpus": name, "q": q, "syntax": "cqp", "format": "csv", "sort": "gdex", "provenance": 1},
        )
        assert exported.status_code == 200, exported.text
        skip = int(exported.text.split("skiprows=")[1].split(";")[0].split(")")[0])
        table = pd.read_csv(
            io.StringIO(exported.text), skiprows=skip, keep_default_na=False, float_precision="round_trip"
        )
        assert list(zip(table["gdex_key"], table["position"], table["matchend"], strict=True)) == expected
        for row in table.itertuples():
            key, values = corpus.explain(row.position, row.matchend)
            if values is None:
                assert row.gdex_score == 0 and row.gdex_tokens == 0
                continue
            assert row.gdex_score == pytest.approx(score_of(values), abs=1e-12)
            assert {rule: getattr(row, f"gdex_{rule}") for rule in values} == values
        # the preview: a page at the start and one further on, each hit with its score and values
        for offset in (0, max(0, len(expected) // 2)):
            page = http.get(
                "/api/v1/query",
                params={"corpus": name, "q": q, "syntax": "cqp", "sort": "gdex", "offset": offset, "limit": 100},
            )
            assert page.status_code == 200, page.text
            for hit, (key, position, matchend) in zip(page.json()["hits"], expected[offset:], strict=False):
                assert (hit["position"], hit["matchend"], hit["gdex"]["key"]) == (position, matchend, key)
                _, values = corpus.explain(position, matchend)
                if values is not None:
                    assert hit["gdex"]["values"] == values and hit["gdex"]["weights"] == WEIGHTS
                    assert hit["gdex"]["score"] == pytest.approx(score_of(values), abs=1e-12)
        return len(expected)


QUERIES = {  # the queries each corpus is checked with (more than 20 hits each)
    TRICKY: ('[pos="NN"]', '[pos="CD"]', '[word="\\(|\\)|\\"|-|@|\\+1"]', '[pos="DT"] [pos="JJ"]? [pos="NN.*"]',
             '[word="[A-Z].*"]', '[pos="\\."] []'),
    "ewt": ('[lemma="house|home|time|good"]', '[pos="CD"]', '[word="\\(|\\)|\\"|\\$|%|@|:\\)"]',
            '[pos="JJ"] [pos="NNS"]', '[word=".*(\\.(com|org|net|html?)|@|www\\.).*"]',
            '[upos="PUNCT"] [upos="PUNCT"]'),
}


def check_queries(site: tuple[str, Corpus], name: str) -> None:
    """``check_query`` for each of ``QUERIES[name]``, each with more than 20 hits."""
    url, corpus = site
    for q in QUERIES[name]:
        assert check_query(url, corpus, name, q) > 20


@pytest.mark.timeout(300)
def test_the_written_rules_give_the_order_and_scores_on_tricky(tricky: tuple[str, Corpus]) -> None:
    check_queries(tricky, TRICKY)


@pytest.mark.timeout(600)
def test_the_written_rules_give_the_order_and_scores_on_ewt(ewt: tuple[str, Corpus]) -> None:
    check_queries(ewt, "ewt")


def test_the_rules_read_tokens_as_written() -> None:
    """What the words of the rules mean, on tokens that tell the readings apart."""
    assert of_letters("don't") and of_letters("well-known") and of_letters("n't") and of_letters("Straße")
    assert not any(of_letters(t) for t in ("'s", "e-", "3D", "x_y", "--", ""))
    assert number_or_symbol("$") and number_or_symbol("4,500") and number_or_symbol("²") and number_or_symbol("=")
    assert not number_or_symbol("...") and not number_or_symbol("(") and not number_or_symbol("house")
    assert url("example.com") and url("www.x") and url("me@home.org") and url("http://a") and url("a.html,")
    assert not url("Node.js") and not url("e.g.") and not url("a.deb") and not url("@home") and not url("a@b c.d")
    assert balanced(["(", "a", ")"]) and not balanced([")", "("]) and not balanced(['"']) and balanced(["{[()]}"])
    common = {"the", "house", "she", "said"}
    values: Any = rule_values("«The house , she said .".split(), 1, 1, common)
    assert values["whole"] == 1.0 and values["edge"] == 1.0 and values["rare"] == 1.0 and values["length"] == 0.6
    assert rule_values("« The house , she said .".split(), 2, 2, common)["whole"] == 0.0  # the first token is «
    assert rule_values("The house , she said .".split(), 4, 4, common)["edge"] == 0.0  # said: the last word
