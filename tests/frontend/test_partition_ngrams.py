"""No word list depends on the partitioning (issue 64, item 2): EWT cut at text boundaries into 2 to 50
partitions gives, for seeded generated ``within=none`` n-gram lists (n from 2 to 5, by word, pos or
lemma, with a minimum, a limit and at times a regex a token must match), exactly the rows that real
CWB's ``cwb-scan-corpus`` counts over the reference EWT in one piece (real cwb-encode's files; the same
tokens at the same positions). Through the front end, whose rounds of the threshold algorithm find the
corpus's most frequent n-grams from partitions that each complete their last n-1 n-grams with the
next partition's first tokens."""

from __future__ import annotations

import random
import subprocess
from collections import Counter
from functools import cache

import pytest
import regex

from tests.frontend.conftest import API_TOKEN, Partitioned, ewt_client
from tests.support import ROOT, ewt_cut, reference_cqp, require_reference

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]  # real cwb-scan-corpus is the judge

CUTS = (2, 9, 50)
"""How many partitions each cutting aims at (the partitioner cuts before a <text> that would overflow)."""

LISTS = 5
"""Generated lists, each asked of every cutting."""

SEED = 64

MATCHES = [None, None, "the|a", "[A-Z].*", "NN.*", "be|have", "\\.|,"]


def generated(count: int, seed: int) -> list[dict[str, str | int]]:
    """``count`` word-list requests: attribute, n, min, limit and at times match."""
    rng = random.Random(seed)
    asked: list[dict[str, str | int]] = []
    for _ in range(count):
        request: dict[str, str | int] = {
            "attribute": rng.choice(["word", "word", "pos", "lemma"]), "n": rng.randint(2, 5),
            "min": rng.choice([1, 2, 3, 5]), "limit": rng.choice([20, 300, 2_000]),
        }  # fmt: skip
        match = rng.choice(MATCHES)
        if match is not None:
            request["match"] = match
        asked.append(request)
    return asked


@cache
def scanned(attribute: str, n: int) -> Counter[tuple[str, ...]]:
    """Real ``cwb-scan-corpus``'s counts of every n-gram of the reference EWT, across texts."""
    binary = reference_cqp().parent / "cwb-scan-corpus"
    registry = require_reference() / "cwb" / "registry"
    done = subprocess.run(
        [str(binary), "-q", "-r", str(registry), "EWT", *(f"{attribute}+{k}" for k in range(n))],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )  # HOME is relative to it
    counts: Counter[tuple[str, ...]] = Counter()
    for line in done.stdout.splitlines():
        frequency, *values = line.split("\t")
        counts[tuple(values)] += int(frequency)
    return counts


def expected(request: dict[str, str | int]) -> list[tuple[list[str], int]]:
    counts = scanned(str(request["attribute"]), int(request["n"]))
    match = request.get("match")
    token = regex.compile(f"(?:{match})") if match is not None else None
    kept = [(k, c) for k, c in counts.items() if c >= int(request["min"])
            and (token is None or any(token.fullmatch(t) for t in k))]  # fmt: skip
    kept.sort(key=lambda item: (-item[1], item[0]))
    return [(list(k), c) for k, c in kept[: int(request["limit"])]]


@pytest.fixture(scope="module")
def cuttings(tmp_path_factory: pytest.TempPathFactory) -> list[Partitioned]:
    base = tmp_path_factory.mktemp("ewt-ngram-cuts")
    found = []
    for parts in CUTS:
        where = base / f"cut{parts}"
        result = ewt_cut(where, parts)
        assert result.manifest is not None
        found.append(Partitioned(where / "registry", result.manifest, [p.id for p in result.partitions]))
    return found


@pytest.mark.timeout(600)  # four encodings and every list on each
async def test_generated_ngram_lists_give_cwb_scan_corpus_counts_however_ewt_is_cut(
    cuttings: list[Partitioned],
) -> None:
    asked = generated(LISTS, SEED)
    assert sorted({len(c.ids) for c in cuttings})[0] == 2 and max(len(c.ids) for c in cuttings) >= 40
    for cutting in cuttings:
        async for client in ewt_client(cutting):
            for request in asked:
                answer = await client.get(
                    "/api/v1/wordlist",
                    params={"corpus": "ewt", "within": "none", **request},
                    headers={"Authorization": f"Bearer {API_TOKEN}"},
                )  # no fair-use limit
                assert answer.status_code == 200, answer.text
                body = answer.json()
                rows = [(row["tokens"], row["frequency"]) for row in body["rows"]]
                assert rows == expected(request), (len(cutting.ids), request)
                assert body["complete"] and body["uncounted"] == 0
