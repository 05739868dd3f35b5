"""Collocations' expected frequency and number of texts (issue 65, item 10), against plain Python over
the tokens of ``tests/frontend/test_partition_edges.py``'s corpus in one piece: E11 = f1 · f2 / N, and
for each collocate the texts holding a window position with it (CQPweb's "in no. of texts"), each
text once. The corpus is cut into 1, 2 and 5 partitions: a window past a cut counts the text its
position is in (a text of the next partition), and under a filter only the subcorpus's texts count.
The encoder cuts only before a ``<text>``; a text that runs across a cut (partitions made another way)
is merged from what the partitions say of their edges: checked on such answers directly, and end to end
on a text written in two pieces whose neighbours say it runs on across the cut."""

from __future__ import annotations

import re
from dataclasses import replace

import httpx
import pytest

from cowbird.core.analysis_merge import TextPart, collocate_texts
from cowbird.store import EncodeOptions, Encoder, parse_s_declaration
from cowbird.store.neighbours import Neighbours
from tests.frontend.conftest import Partitioned, ewt_client
from tests.frontend.test_partition_edges import (
    NAME,
    TOKENS,
    VRT,
    clients_fixture,  # noqa: F401 - the fixture clients, used by name
    collocations,
    cuts_fixture,  # noqa: F401 - the fixture cuts, used by name
    hits_of,
)

pytestmark = pytest.mark.anyio


def text_of_tokens() -> list[int]:
    """The text each token of the corpus is in (0-based, in order)."""
    texts: list[int] = []
    text = -1
    for line in VRT.splitlines():
        if line.startswith("<text "):
            text += 1
        elif line and not line.startswith("<"):
            texts.append(text)
    assert len(texts) == len(TOKENS)
    return texts


TEXT_OF = text_of_tokens()


def expected(
    hits: list[tuple[int, int]], left: int, right: int, within_text: bool, keep: set[int] | None = None
) -> tuple[dict[str, int], dict[str, float]]:
    """By word: the texts its window positions lie in, and E11 = f1 · f2 / N (f1: window positions,
    f2: its frequency outside the hits, N: tokens outside the hits), all within ``keep`` (a subcorpus)."""
    chosen = set(range(len(TOKENS))) if keep is None else keep
    inside = {p for a, b in hits for p in range(a, b + 1)} & chosen
    window: set[int] = set()
    for a, b in hits:
        for p in [*range(max(0, a - left), a), *range(b + 1, min(len(TOKENS), b + right + 1))]:
            if not within_text or TEXT_OF[p] == TEXT_OF[a]:
                window.add(p)
    window = (window - inside) & chosen
    texts: dict[str, set[int]] = {}
    for p in window:
        texts.setdefault(TOKENS[p].word, set()).add(TEXT_OF[p])
    n = len(chosen) - len(inside)
    outside: dict[str, int] = {}
    for p in chosen - inside:
        outside[TOKENS[p].word] = outside.get(TOKENS[p].word, 0) + 1
    return ({w: len(t) for w, t in texts.items()}, {w: len(window) * outside[w] / n for w in texts})


async def check_collocates(
    clients: dict[int, httpx.AsyncClient], texts: dict[str, int], e11: dict[str, float], q: str, **params: str | int
) -> None:
    """Under every cutting, the collocations of the CQP query ``q`` by word (every row, by frequency):
    each collocate in as many texts as ``texts`` says, its E11 ``e11``'s (to 12 digits)."""
    for count, client in clients.items():
        body = await collocations(client, q, order="f", **params)
        rows = body["rows"]
        assert isinstance(rows, list)
        assert {r["value"]: r["texts"] for r in rows if r["f"]} == texts, count
        for r in rows:
            if r["f"]:
                assert r["expected"] == pytest.approx(e11[r["value"]], rel=1e-12), (count, r["value"])


@pytest.mark.parametrize(
    ("query", "pattern", "left", "right", "within"),
    [
        ('[pos="N"]', ["N"], 3, 3, "none"),
        ('[pos="X"]', ["X"], 100, 100, "none"),
        ('[pos="A"] [pos="N"]', ["A", "N"], 5, 2, "text"),
        ('[pos="V"]', ["V"], 0, 40, "none"),
    ],
)
@pytest.mark.slow  # 3.7 s here (make quick leaves it out)
async def test_each_collocates_texts_count_once_across_the_cuts(
    clients: dict[int, httpx.AsyncClient], query: str, pattern: list[str], left: int, right: int, within: str
) -> None:
    hits = hits_of(pattern)
    texts, e11 = expected(hits, left, right, within == "text")
    await check_collocates(clients, texts, e11, q=query, left=left, right=right, within=within)


@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
async def test_texts_under_a_filter_are_the_subcorpus_texts(clients: dict[int, httpx.AsyncClient]) -> None:
    hits = [(k, k) for k, t in enumerate(TOKENS) if t.pos == "X" and t.genre == "news"]
    news = {k for k, t in enumerate(TOKENS) if t.genre == "news"}
    texts, e11 = expected(hits, 30, 30, False, news)
    await check_collocates(clients, texts, e11, q='[pos="X"]', window=30, within="none", filter="text_genre~news")


async def test_the_file_carries_texts_and_full_precision(clients: dict[int, httpx.AsyncClient]) -> None:
    answer = await clients[5].get(
        "/api/v1/collocations",
        params={
            "corpus": NAME,
            "q": '[pos="N"]',
            "syntax": "cqp",
            "attribute": "word",
            "window": 3,
            "within": "none",
            "format": "tsv",
            "limit": 100_000,
            "order": "f",
            "min_freq": 1,
        },
    )
    assert answer.status_code == 200, answer.text
    lines = [line.split("\t") for line in answer.text.splitlines() if line and not line.startswith("#")]
    head = lines[0]
    assert head[:8] == ["value", "f", "f2", "marginal", "in_nodes", "expected", "texts", "log_likelihood"]
    texts, _ = expected(hits_of(["N"]), 3, 3, False)
    assert {row[0]: int(row[6]) for row in lines[1:]} == texts
    dice = head.index("dice")
    assert any(len(re.sub(r"^0\.0*", "", row[dice])) > 6 for row in lines[1:])  # not rounded


def test_a_text_cut_between_partitions_counts_once() -> None:
    """Three partitions, one text running from the first through the whole second into the third: a
    collocate in its pieces in the first and third (not the second) is in one text, plus one text of
    its own in the second; a spilled position past the first's edge in that text adds none."""
    first = TextPart(0, 100, True, 3, False, True, {"a": 2, "b": 1}, {"a": [0, 2], "b": [2]}, [(100, "a", 0)])
    middle = TextPart(100, 50, True, 1, True, True, {"b": 1}, {"b": [0]}, [])
    last = TextPart(150, 100, True, 2, True, False, {"a": 2, "b": 1}, {"a": [0, 1], "b": [0]}, [])
    assert collocate_texts([first, middle, last], {100}) == {"a": 3, "b": 1}
    assert collocate_texts([first, middle, last], set()) == {"a": 3, "b": 1}
    failed = TextPart(100, 50, False, None, False, False, {}, {}, [])
    assert collocate_texts([first, failed, last], set()) == {"a": 4, "b": 2}  # pieces not known to be one


SPLIT = 11
"""The text written as two ``<text>`` elements, a partition's last and the next one's first."""


def split_vrt() -> tuple[str, int]:
    """The corpus with text ``SPLIT`` written in two pieces (the same id, a cut between them), and the
    tokens up to the end of its first piece."""
    lines, out, tokens, text, sentence, first_piece = VRT.splitlines(), [], 0, -1, 0, 0
    for line in lines:
        if line.startswith("<text "):
            text += 1
            sentence = 0
            opening = line
        if text == SPLIT and line == "<s>":
            sentence += 1
            if sentence == 3:  # its third sentence begins the second piece
                out += ["</text>", opening]
                first_piece = tokens
        if line and not line.startswith("<"):
            tokens += 1
        out.append(line)
    return "\n".join(out) + "\n", first_piece


def continue_text(parts: Partitioned, cut: int) -> None:
    """Rewrite the neighbours at the cut (global position ``cut``) as a text running across it: the
    piece after the cut does not start a region, the one before does not end one."""
    for path in sorted(parts.registry.parent.rglob("neighbours.json")):
        found = Neighbours.load(path.parent)
        assert found is not None
        if found.after_offset == cut and found.after:
            first = found.after[0]
            marks = {**first.regions, "text": replace(first.regions["text"], start=False)}
            found = replace(found, after=[replace(first, regions=marks), *found.after[1:]])
        if found.before_offset + len(found.before) == cut and found.before:
            last = found.before[-1]
            marks = {**last.regions, "text": replace(last.regions["text"], end=False)}
            found = replace(found, before=[*found.before[:-1], replace(last, regions=marks)])
        found.write(path.parent)


async def test_a_text_across_a_cut_counts_once_end_to_end(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Text 11 in two pieces, cut between them, its neighbours saying it runs on (as partitions made
    otherwise than by the encoder, which cuts only before a text, would say): each collocate's texts
    count the two pieces as one, windows spilling across the cut included."""
    vrt, first_piece = split_vrt()
    base = tmp_path_factory.mktemp("text-across")
    (base / f"{NAME}.vrt").write_text(vrt, encoding="utf-8")
    options = EncodeOptions(
        input=base / f"{NAME}.vrt", data_dir=base / "data", registry_file=base / "registry" / NAME,
        p_attributes=["word", "pos"], s_attributes=[parse_s_declaration("text:0+id+genre"),
                                                     parse_s_declaration("s:0")],
        charset="utf8", xml=True, skip_blank=True, strip_blanks=True, partition_tokens=first_piece,
    )  # fmt: skip
    result = Encoder(options).run()
    assert result.manifest is not None
    parts = Partitioned(base / "registry", result.manifest, [p.id for p in result.partitions])
    assert first_piece in [p.offset for p in result.partitions]
    continue_text(parts, first_piece)
    hits = hits_of(["X"])
    texts, _ = expected(hits, 40, 40, False)
    async for client in ewt_client(parts, NAME):
        body = await collocations(client, '[pos="X"]', window=40, within="none", order="f")
        rows = body["rows"]
        assert isinstance(rows, list)
        assert {r["value"]: r["texts"] for r in rows if r["f"]} == texts
        assert any(r["texts"] > 1 for r in rows)
