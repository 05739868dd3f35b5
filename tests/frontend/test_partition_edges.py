"""No analysis depends on where the corpus is cut (issue 64, item 2): a corpus of our own, cut into 1, 2
and 5 partitions, gives the same ``within=none`` n-grams, the same collocation tables and the same KWIC
lines, each equal to what plain Python counts over the tokens of the corpus in one piece.

Each partition carries the tokens just before and after it (``cowbird.store.neighbours``): an n-gram
starting in a partition's last tokens is completed with the next partition's first ones, a
collocation window or a context in tokens reads on past the cut. The corpus's texts begin and end
with a word of their own (``u7a``, ``u7z``), so that the tokens across a cut are not in the lexicon
of the partition reading them."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from cowbird.store import EncodeOptions, parse_s_declaration
from tests.frontend.conftest import Partitioned, encode_parts, ewt_client

pytestmark = pytest.mark.anyio

NAME = "edges"
VOCABULARY = ["the", "a", "house", "cat", "sees", "runs", "red", "old", "of", "and", "in", "dog", "tree", "big"]
TAGS = {
    "the": "D",
    "a": "D",
    "house": "N",
    "cat": "N",
    "dog": "N",
    "tree": "N",
    "sees": "V",
    "runs": "V",
    "red": "A",
    "old": "A",
    "big": "A",
    "of": "P",
    "and": "C",
    "in": "P",
}


@dataclass(frozen=True)
class Token:
    word: str
    pos: str
    genre: str


def corpus_tokens() -> tuple[list[Token], str]:
    """The corpus's tokens in order and its VRT: 24 texts (news and blog in turn) of 4 to 14 sentences."""
    rng = random.Random(64)
    tokens: list[Token] = []
    lines: list[str] = []
    for t in range(24):
        genre = "news" if t % 2 else "blog"
        lines.append(f'<text id="t{t}" genre="{genre}">')
        sentences = rng.randint(4, 14)
        for s in range(sentences):
            words = [rng.choice(VOCABULARY) for _ in range(rng.randint(3, 12))]
            if s == 0:
                words[0] = f"u{t}a"
            if s == sentences - 1:
                words[-1] = f"u{t}z"
            lines.append("<s>")
            for word in words:
                pos = TAGS.get(word, "X")
                lines.append(f"{word}\t{pos}")
                tokens.append(Token(word, pos, genre))
            lines.append("</s>")
        lines.append("</text>")
    return tokens, "\n".join(lines) + "\n"


TOKENS, VRT = corpus_tokens()


def encode(base: Path, partition_tokens: int) -> Partitioned:
    vrt = base / f"{NAME}.vrt"
    vrt.write_text(VRT, encoding="utf-8")
    options = EncodeOptions(
        input=vrt, data_dir=base / "data", registry_file=base / "registry" / NAME, p_attributes=["word", "pos"],
        s_attributes=[parse_s_declaration("text:0+id+genre"), parse_s_declaration("s:0")], charset="utf8",
        xml=True, skip_blank=True, strip_blanks=True, partition_tokens=partition_tokens,
    )  # fmt: skip
    return encode_parts(options)


@pytest.fixture(scope="module", name="cuts")
def cuts_fixture(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Partitioned]:
    """The corpus in 1, 2 and 5 partitions (cut before a text: the encoder never splits one)."""
    found = {}
    for count, limit in ((1, 1_000_000), (2, len(TOKENS) // 2 + 200), (5, len(TOKENS) // 5 + 60)):
        parts = encode(tmp_path_factory.mktemp(f"edges-{count}"), limit)
        assert len(parts.ids) == count, (count, limit, len(parts.ids))
        found[count] = parts
    return found


@pytest.fixture(name="clients")
async def clients_fixture(cuts: dict[int, Partitioned]) -> AsyncIterator[dict[int, httpx.AsyncClient]]:
    """A front end and its nodes over each cutting, by its number of partitions."""
    opened: dict[int, httpx.AsyncClient] = {}
    iterators = []
    for count, parts in cuts.items():
        iterator = ewt_client(parts, NAME)
        iterators.append(iterator)
        opened[count] = await iterator.__anext__()
    yield opened
    for iterator in iterators:  # on to the end: each front end and node shut down
        await anext(iterator, None)


async def get(client: httpx.AsyncClient, path: str, **params: str | int) -> dict[str, object]:
    answer = await client.get(path, params={"corpus": NAME, **params})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert isinstance(body, dict) and body.get("complete", True), body
    return body


async def collocations(client: httpx.AsyncClient, q: str, **params: str | int) -> dict[str, object]:
    """The answer for the collocates by word of the CQP query ``q``: every one seen once or more
    (100,000 rows at most)."""
    every: dict[str, str | int] = {"syntax": "cqp", "attribute": "word", "min_freq": 1, "limit": 100_000}
    return await get(client, "/api/v1/collocations", q=q, **every, **params)


# -- n-grams ------------------------------------------------------------------------------------------


def ngrams(n: int, genre: str | None = None, match: str | None = None) -> list[tuple[list[str], int]]:
    """Every n-gram of the corpus in one piece (across texts), by plain Python: in texts of ``genre``
    only (each token), with a token matching ``match`` whole; most frequent first, then by tokens."""
    counts: Counter[tuple[str, ...]] = Counter()
    for k in range(len(TOKENS) - n + 1):
        gram = TOKENS[k : k + n]
        if genre is not None and any(t.genre != genre for t in gram):
            continue
        if match is not None and not any(re.fullmatch(match, t.word) for t in gram):
            continue
        counts[tuple(t.word for t in gram)] += 1
    return [(list(k), c) for k, c in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


@pytest.mark.parametrize(
    ("n", "genre", "match"),
    [
        (2, None, None),
        (3, None, None),
        (5, None, None),
        (2, "news", None),
        (3, None, "u.*"),
        (4, "blog", "u.*z"),
    ],
)
@pytest.mark.slow  # 1.8 s here (make quick leaves it out)
async def test_ngrams_across_texts_are_the_same_however_the_corpus_is_cut(
    clients: dict[int, httpx.AsyncClient], n: int, genre: str | None, match: str | None
) -> None:
    expected = ngrams(n, genre, match)
    params: dict[str, str | int] = {"attribute": "word", "n": n, "within": "none", "limit": 100_000}
    if genre is not None:
        params["filter"] = f"text_genre~{genre}"
    if match is not None:
        params["match"] = match
    for count, client in clients.items():
        body = await get(client, "/api/v1/wordlist", **params)
        rows = body["rows"]
        assert isinstance(rows, list)
        assert [(r["tokens"], r["frequency"]) for r in rows] == expected, count
        assert body["uncounted"] == 0
    if match is None and genre is None:
        assert body["ngrams"] == len(TOKENS) - n + 1


@pytest.mark.slow  # 1.6 s here (make quick leaves it out)
async def test_the_top_ngrams_and_a_threshold_over_partitions_count_the_ones_across_cuts(
    clients: dict[int, httpx.AsyncClient],
) -> None:
    """A short list (the rounds of the threshold algorithm) and a minimum: the n-grams across cuts
    (with words of the next partition only) counted in each round."""
    for n, limit, least, match in (
        (2, 15, 1, ".*"),
        (3, 40, 2, ".*"),
        (2, 100, 3, ".*"),
        (2, 30, 1, "u.*"),
        (3, 25, 1, "u.*z"),
    ):
        expected = [row for row in ngrams(n, match=match) if row[1] >= least][:limit]
        for count, client in clients.items():
            body = await get(
                client, "/api/v1/wordlist", attribute="word", n=n, within="none", limit=limit, min=least, match=match
            )
            rows = body["rows"]
            assert isinstance(rows, list)
            assert [(r["tokens"], r["frequency"]) for r in rows] == expected, (count, n)


# -- collocations -------------------------------------------------------------------------------------


def hits_of(pattern: list[str]) -> list[tuple[int, int]]:
    """The matches of a sequence of pos tags (each a regex), CQP's default (shortest, non-overlapping
    from left to right does not apply to fixed-length patterns: every start)."""
    n = len(pattern)
    return [
        (k, k + n - 1)
        for k in range(len(TOKENS) - n + 1)
        if all(re.fullmatch(p, TOKENS[k + j].pos) for j, p in enumerate(pattern))
    ]


def collocates(hits: list[tuple[int, int]], left: int, right: int) -> tuple[dict[str, int], int, int]:
    """Co-occurrences in the windows around the hits, each position once, hits excluded (as cwb-ccc
    counts them), over the corpus in one piece: by word, the window tokens and the hit tokens."""
    inside = {p for a, b in hits for p in range(a, b + 1)}
    window = {p for a, b in hits for p in [*range(max(0, a - left), a), *range(b + 1, min(len(TOKENS), b + right + 1))]}
    window -= inside
    return dict(Counter(TOKENS[p].word for p in window)), len(window), len(inside)


@pytest.mark.parametrize(
    ("query", "pattern", "left", "right"),
    [
        ('[pos="N"]', ["N"], 3, 3),
        ('[pos="A"] [pos="N"]', ["A", "N"], 5, 2),
        ('[pos="X"]', ["X"], 100, 100),
        ('[pos="V"]', ["V"], 0, 40),
    ],
)
@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
async def test_collocation_windows_read_across_the_cuts(
    clients: dict[int, httpx.AsyncClient], query: str, pattern: list[str], left: int, right: int
) -> None:
    hits = hits_of(pattern)
    f, window, inside = collocates(hits, left, right)
    words = Counter(t.word for t in TOKENS)
    in_hits = Counter(TOKENS[p].word for a, b in hits for p in range(a, b + 1))
    tables = []
    for count, client in clients.items():
        body = await collocations(client, query, left=left, right=right, within="none", order="f")
        assert body["f1"] == window and body["n"] == len(TOKENS) - inside, count
        rows = body["rows"]
        assert isinstance(rows, list)
        assert {r["value"]: r["f"] for r in rows} == f, count
        assert all(r["marginal"] == words[r["value"]] and r["in_nodes"] == in_hits[r["value"]] for r in rows)
        tables.append(rows)
    assert tables[0] == tables[1] == tables[2]  # the scores too, to the last digit


@pytest.mark.slow  # 1.8 s here (make quick leaves it out)
async def test_windows_within_a_region_are_as_before(clients: dict[int, httpx.AsyncClient]) -> None:
    """within=text: no window leaves its text, and a partition is cut between texts."""
    tables = [(await collocations(c, '[pos="X"]', window=20, within="text"))["rows"] for c in clients.values()]
    assert tables[0] == tables[1] == tables[2]


# -- KWIC lines ---------------------------------------------------------------------------------------


async def test_kwic_lines_at_a_partitions_first_and_last_hits_read_the_neighbours(
    clients: dict[int, httpx.AsyncClient],
    cuts: dict[int, Partitioned],
) -> None:
    """The first and last word of every text (``u7a``, ``u7z``): the hits right at the cuts. Their
    lines in 10 tokens and in 50 each side, over the corpus in one piece, with the pos of each."""
    hits = [k for k, t in enumerate(TOKENS) if t.word.startswith("u")]
    words = [t.word for t in TOKENS]
    for context in (10, 50):
        expected = [
            (" ".join(words[max(0, k - context) : k]), words[k], " ".join(words[k + 1 : k + 1 + context])) for k in hits
        ]
        for count, client in clients.items():
            body = await get(client, "/api/v1/query", q='[word="u.*"]', syntax="cqp", context=context, limit=100)
            lines = body["hits"]
            assert isinstance(lines, list)
            assert [(h["left"], h["match"], h["right"]) for h in lines] == expected, (count, context)


@pytest.mark.parametrize("tokens", [1, 5, 100])
@pytest.mark.slow  # 1.4 s here (make quick leaves it out)
async def test_a_line_widened_in_place_across_texts_reads_past_the_cut(
    clients: dict[int, httpx.AsyncClient], tokens: int
) -> None:
    """``/api/v1/context`` with ``region=none``: the tokens each side, across the cut, with their
    attributes and the text and sentence boundaries inside the line."""
    starts = [k for k, t in enumerate(TOKENS) if t.word.endswith("a") and t.word.startswith("u")]
    for position in [*starts, *(k - 1 for k in starts[1:])]:
        expected_left = [[t.word, t.pos] for t in TOKENS[max(0, position - tokens) : position]]
        expected_right = [[t.word, t.pos] for t in TOKENS[position + 1 : position + 1 + tokens]]
        answers = []
        for client in clients.values():
            answer = await client.get(
                f"/api/v1/context/{NAME}/{position}", params={"tokens": tokens, "region": "none", "show": "pos"}
            )
            assert answer.status_code == 200, answer.text
            body = answer.json()
            assert body["left"] == expected_left and body["right"] == expected_right, position
            answers.append(body)
        assert answers[0] == answers[1] == answers[2]


# -- a corpus encoded before partitions carried their neighbours -----------------------------------------


@pytest.fixture(scope="module")
def without_neighbours(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    """The corpus in 5 partitions, their neighbours.json removed: as encoded before they existed."""
    parts = encode(tmp_path_factory.mktemp("edges-old"), len(TOKENS) // 5 + 60)
    removed = list((parts.registry.parent / "data").rglob("neighbours.json"))
    assert len(removed) == 5
    for path in removed:
        path.unlink()
    return parts


async def test_a_partition_without_neighbours_stops_at_its_edges_and_says_so(without_neighbours: Partitioned) -> None:
    """n-1 n-grams at each of the 4 cuts are not counted, and ``uncounted`` says so; lines stop at the cut."""
    async for client in ewt_client(without_neighbours, NAME):
        body = await get(client, "/api/v1/wordlist", attribute="word", n=3, within="none", limit=100_000)
        assert body["uncounted"] == 4 * 2 and body["ngrams"] == len(TOKENS) - 2 - 4 * 2
        first = next(k for k, t in enumerate(TOKENS) if k and t.word.endswith("a") and t.word.startswith("u"))
        lines = await get(client, "/api/v1/query", q='[word="u.*a"]', syntax="cqp", context=5, limit=100)
        hits = lines["hits"]
        assert isinstance(hits, list)
        assert [h["position"] for h in hits][1] == first
        assert sum(h["left"] == "" for h in hits) == 5  # the corpus's first token, and each partition's


# -- offsets past the match: frequency breakdowns and sort keys --------------------------------------------


def at(k: int) -> str:
    """The word at position k, clamped to the corpus as CQP clamps an offset."""
    return TOKENS[min(max(k, 0), len(TOKENS) - 1)].word


@pytest.mark.parametrize(
    ("query", "by", "on", "value"),
    [
        ('[word="u.*z"]', "word", "matchend[1]", lambda k: at(k + 1)),
        ('[word="u.*a"]', "word", "match[-1]", lambda k: at(k - 1)),
        ('[word="u.*a"]', "word", "match[-2]..match", lambda k: " ".join(at(j) for j in range(max(0, k - 2), k + 1))),
        (
            '[word="u.*z"]',
            "word,pos",
            "match[-1],matchend[2]",
            lambda k: f"{at(k - 1)} / {TOKENS[min(k + 2, len(TOKENS) - 1)].pos}",
        ),
    ],
)
@pytest.mark.slow  # 1.6 s here (make quick leaves it out)
async def test_a_breakdown_on_an_offset_reads_past_the_cut(
    clients: dict[int, httpx.AsyncClient], query: str, by: str, on: str, value: Callable[[int], str]
) -> None:
    """``count A by word on matchend[1]`` of a text's last word: the next text's first word, which at a
    cut is in the next partition (CQP over the corpus in one piece reads it; at the corpus's ends it
    clamps)."""
    hits = [k for k, t in enumerate(TOKENS) if re.fullmatch(query.split('"')[1], t.word)]
    expected = sorted(Counter(value(k) for k in hits).items(), key=lambda item: (-item[1], item[0]))
    for count, client in clients.items():
        body = await get(client, "/api/v1/frequency", q=query, syntax="cqp", by=by, on=on, limit=100_000)
        rows = body["rows"]
        assert isinstance(rows, list)
        assert [(r["value"], r["frequency"]) for r in rows] == expected, count


@pytest.mark.parametrize(
    ("sort", "direction"), [("right1.word", "asc"), ("left1.word", "desc"), ("right1.word%c", "desc")]
)
@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
async def test_hits_sorted_on_the_next_word_read_past_the_cut(
    clients: dict[int, httpx.AsyncClient], sort: str, direction: str
) -> None:
    """A sort on the word after (before) each hit: the hits at a partition's edges sort by their
    neighbour's word, in every partitioning the order CQP gives over the corpus in one piece (code
    points, ties in corpus order)."""
    query = '[word="u.*z"]' if sort.startswith("right") else '[word="u.*a"]'
    hits = [k for k, t in enumerate(TOKENS) if re.fullmatch(query.split('"')[1], t.word)]
    offset = 1 if sort.startswith("right") else -1
    keyed = [(at(k + offset).casefold() if sort.endswith("%c") else at(k + offset), at(k + offset), k) for k in hits]
    expected = [k for *_, k in sorted(keyed)]
    if direction == "desc":
        groups: dict[tuple[str, str], list[int]] = {}
        for folded, plain, k in keyed:
            groups.setdefault((folded, plain), []).append(k)
        expected = [k for key in sorted(groups, reverse=True) for k in groups[key]]
    for count, client in clients.items():
        body = await get(client, "/api/v1/query", q=query, syntax="cqp", sort=sort, direction=direction, limit=100)
        lines = body["hits"]
        assert isinstance(lines, list)
        assert [h["position"] for h in lines] == expected, count


async def test_collocation_windows_across_the_cuts_under_a_filter(clients: dict[int, httpx.AsyncClient]) -> None:
    """Under ``filter=text_genre~news`` a window counts only the positions in news texts, on both sides
    of a cut alike (the hits are the news texts' own)."""
    hits = [(k, k) for k, t in enumerate(TOKENS) if t.pos == "X" and t.genre == "news"]
    inside = {k for k, _ in hits}
    window = {p for k, _ in hits for p in [*range(max(0, k - 30), k), *range(k + 1, min(len(TOKENS), k + 31))]}
    window = {p for p in window - inside if TOKENS[p].genre == "news"}
    expected = Counter(TOKENS[p].word for p in window)
    tables = []
    for count, client in clients.items():
        body = await collocations(client, '[pos="X"]', window=30, within="none", filter="text_genre~news", order="f")
        rows = body["rows"]
        assert isinstance(rows, list)
        assert body["f1"] == len(window) and {r["value"]: r["f"] for r in rows} == dict(expected), count
        tables.append(rows)
    assert tables[0] == tables[1] == tables[2]
