"""Word lists and n-gram lists (``GET /api/v1/wordlist``) through the front end, judged by real CWB's
``cwb-scan-corpus`` on the one-partition encoding of ``tests/fixtures/tricky.vrt``, and exact over
five partitions: the rounds that find the most frequent n-grams of the corpus from partitions that
each send only their own most frequent ones must end with the same rows and counts.

``cwb-scan-corpus`` counts n-grams across text boundaries; the key ``text_id+0 … text_id+(n-1)`` says
which stay within one text (cowbird's default ``within=text``)."""

from __future__ import annotations

import io
import json
import subprocess
from collections import Counter
from urllib.parse import parse_qs, urlsplit

import httpx
import pandas as pd
import pytest

from tests.frontend.conftest import TRICKY as CORPUS
from tests.frontend.conftest import Partitioned, assert_refused_saying
from tests.support import read_tricky, reference_cqp

pytestmark = pytest.mark.anyio


def scan_corpus(parts: Partitioned, attribute: str, n: int, genre: str | None = None) -> Counter[tuple[str, ...]]:
    """Real ``cwb-scan-corpus``'s n-gram counts, those crossing texts left out (and, with ``genre``, only
    those in texts of that genre)."""
    binary = reference_cqp().parent / "cwb-scan-corpus"
    keys = [f"{attribute}+{k}" for k in range(n)] + ["text_id+0", f"text_id+{n - 1}"]
    if genre is not None:
        keys.append(f"?text_genre+0=/{genre}/")
    done = subprocess.run([str(binary), "-q", "-r", str(parts.registry), parts.ids[0].upper(), *keys],
                          capture_output=True, text=True, check=True)
    counts: Counter[tuple[str, ...]] = Counter()
    for line in done.stdout.splitlines():
        frequency, *values = line.split("\t")
        if values[n] == values[n + 1]:  # within one text
            counts[tuple(values[:n])] += int(frequency)
    return counts


def top(counts: Counter[tuple[str, ...]], limit: int, least: int = 1) -> list[tuple[list[str], int]]:
    ranked = sorted(((k, c) for k, c in counts.items() if c >= least), key=lambda item: (-item[1], item[0]))
    return [(list(k), c) for k, c in ranked[:limit]]


def rows(answer: httpx.Response) -> list[tuple[list[str], int]]:
    assert answer.status_code == 200, answer.text
    return [(row["tokens"], row["frequency"]) for row in answer.json()["rows"]]


@pytest.mark.slow
@pytest.mark.parametrize(("attribute", "n", "limit", "least"), [
    ("word", 1, 50, 1), ("lemma", 1, 2000, 3), ("word", 2, 40, 1), ("pos", 3, 100, 5), ("word", 3, 25, 2),
    ("lemma", 4, 30, 2), ("word", 5, 10, 1),
])
async def test_word_lists_and_ngrams_equal_cwb_scan_corpus_on_one_and_five_partitions(
    one: httpx.AsyncClient, five: httpx.AsyncClient, tricky_one: Partitioned, attribute: str, n: int, limit: int,
    least: int,
) -> None:
    expected = top(scan_corpus(tricky_one, attribute, n), limit, least)
    assert expected
    for client in (one, five):
        answer = await client.get("/api/v1/wordlist", params={"corpus": CORPUS, "attribute": attribute, "n": n,
                                                                "limit": limit, "min": least})
        assert rows(answer) == expected
        body = answer.json()
        assert body["complete"] and body["tokens"] == 12_762
        assert body["n"] == n and body["within"] == "text"


@pytest.mark.slow  # 1.8 s here (make quick leaves it out)
async def test_a_subcorpus_by_metadata_and_a_regex_on_the_tokens(
    one: httpx.AsyncClient, five: httpx.AsyncClient, tricky_one: Partitioned,
) -> None:
    news = scan_corpus(tricky_one, "word", 2, genre="news")
    in_news = sum(1 for t in read_tricky() if t.text["genre"] == "news")
    ing = Counter({k: c for k, c in scan_corpus(tricky_one, "word", 1).items() if k[0].endswith("ing")})
    for client in (one, five):
        answer = await client.get("/api/v1/wordlist", params={"corpus": CORPUS, "n": 2, "filter": "text_genre~news",
                                                                "limit": 30})
        assert rows(answer) == top(news, 30)
        assert answer.json()["tokens"] == in_news
        assert answer.json()["rows"][0]["per_million"] == pytest.approx(top(news, 1)[0][1] * 1e6 / in_news)
        for row in answer.json()["rows"][:5]:  # each row links to its hits: as many as it counts
            asked = {k: v if k == "filter" else v[0] for k, v in parse_qs(urlsplit(row["hits"]).query).items()}
            assert asked["filter"] == ["text_genre~news"]
            found = await client.get("/api/v1/query", params={**asked, "limit": 0})
            assert found.status_code == 200, found.text
            assert found.json()["total"] == row["frequency"]
        answer = await client.get("/api/v1/wordlist", params={"corpus": CORPUS, "match": ".*ing", "limit": 500})
        assert rows(answer) == top(ing, 500)
        for row in answer.json()["rows"][:3]:  # single words link to their hits too
            asked = {k: v[0] for k, v in parse_qs(urlsplit(row["hits"]).query).items()}
            found = await client.get("/api/v1/query", params={**asked, "limit": 0})
            assert found.json()["total"] == row["frequency"]
        assert not answer.json()["more"]  # every word ending in -ing is listed


@pytest.mark.slow  # 1.5 s here (make quick leaves it out)
async def test_a_word_list_downloads_as_files_with_provenance(five: httpx.AsyncClient,
                                                              tricky_one: Partitioned) -> None:
    expected = top(scan_corpus(tricky_one, "word", 2), 20)
    for format in ("tsv", "csv", "xlsx"):
        answer = await five.get("/api/v1/wordlist", params={"corpus": CORPUS, "n": 2, "limit": 20, "format": format,
                                                             "provenance": 1})
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-disposition"].endswith(f'.{format}"')
        if format == "xlsx":
            frame = pd.read_excel(io.BytesIO(answer.content), sheet_name=0, keep_default_na=False)
            about = pd.read_excel(io.BytesIO(answer.content), sheet_name=1, header=None)
            assert "wordlist" in about.astype(str).to_numpy().ravel().tolist()
        else:
            text = answer.content.decode("utf-8")
            skip = [i for i, line in enumerate(text.splitlines()) if line.startswith("#")]
            assert any("analysis" in text.splitlines()[i] for i in skip)
            frame = pd.read_csv(io.StringIO(text), sep="\t" if format == "tsv" else ",", comment=None,
                                skiprows=len(skip), keep_default_na=False, quoting=3 if format == "tsv" else 0)
        got = [([str(a), str(b)], int(c)) for a, b, c in zip(frame["token1"], frame["token2"], frame["frequency"],
                                                              strict=True)]
        assert got == expected


async def test_word_list_errors_say_what_was_wrong(five: httpx.AsyncClient) -> None:
    await assert_refused_saying(five, "/api/v1/wordlist", {"corpus": CORPUS}, {
        (("attribute", "colour"),): "no p-attribute 'colour'",
        (("n", "6"),): "n",
        (("within", "chapter"),): "no s-attribute 'chapter'",
        (("filter", "text_colour~x"),): "text_colour",
        (("match", "a(b"),): "match",
        (("limit", "100001"),): "at most 100,000 rows",
    })


@pytest.mark.slow
async def test_the_counts_asked_of_a_node_come_in_pieces_it_takes(
    five: httpx.AsyncClient, tricky_one: Partitioned, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The last round names many n-grams to each partition (every 3-gram of the corpus here): they go
    in pieces under a node's request limit (64 KB by default), small pieces here, and stay exact."""
    from cowbird.core import wordlist

    every = scan_corpus(tricky_one, "word", 3)
    assert len(every) > 5_000
    pieces = wordlist.values_pieces(list(every), 2_000)
    assert len(pieces) > 20 and [k for piece in pieces for k in piece] == list(every)
    assert all(len(json.dumps([list(k) for k in piece]).encode()) <= 2_000 + 2 * len(piece) for piece in pieces)
    monkeypatch.setattr(wordlist, "VALUES_BYTES", 2_000)
    answer = await five.get("/api/v1/wordlist", params={"corpus": CORPUS, "n": 3, "limit": 20_000})
    assert rows(answer) == top(every, 20_000)
    assert not answer.json()["more"] and answer.json()["complete"]


@pytest.mark.slow
@pytest.mark.parametrize(("attribute", "n", "match", "least"), [
    ("word", 3, "house|home", 1), ("lemma", 5, "go", 1), ("word", 2, "[A-Z].*", 2), ("pos", 4, "NNP", 3),
])
async def test_ngrams_with_a_token_matching_a_regex_equal_cwb_scan_corpus(
    one: httpx.AsyncClient, five: httpx.AsyncClient, tricky_one: Partitioned, attribute: str, n: int, match: str,
    least: int,
) -> None:
    """A list with ``match`` counts only the n-grams with a matching token (a few of the partition's
    many) when the node holds no table of them all yet: the same rows, and the same number of n-grams
    counted, as the whole table gives afterwards and as cwb-scan-corpus counts."""
    import regex

    every = scan_corpus(tricky_one, attribute, n)
    token = regex.compile(f"(?:{match})")
    expected = Counter({k: c for k, c in every.items() if any(token.fullmatch(t) for t in k)})
    params: dict[str, str | int] = {"corpus": CORPUS, "attribute": attribute, "n": n, "match": match, "min": least,
                                    "limit": 100_000}
    for client in (one, five):  # fresh nodes: the first list counts only the matching n-grams
        first = await client.get("/api/v1/wordlist", params=params)
        assert rows(first) == top(expected, 100_000, least)
        whole = await client.get("/api/v1/wordlist", params={k: v for k, v in params.items() if k != "match"})
        assert whole.json()["rows"] and len(whole.json()["rows"]) > len(first.json()["rows"])
        again = await client.get("/api/v1/wordlist", params=params)  # from the table of every n-gram
        assert rows(again) == rows(first)
        assert first.json()["ngrams"] == whole.json()["ngrams"] == again.json()["ngrams"] == sum(every.values())


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.slow  # 6.5 s here (make quick leaves it out)
async def test_within_none_counts_the_ngrams_across_the_cuts_between_partitions(
    one: httpx.AsyncClient, five: httpx.AsyncClient, n: int
) -> None:
    """within=none: n-grams cross texts, and the cuts between partitions too (each partition completes
    its last n-1 n-grams with the next one's first tokens): five partitions count every n-gram of the
    corpus in one piece, as plain Python counts them over the tokens, and leave none uncounted."""
    words = [t.word for t in read_tricky()]
    expected = Counter(tuple(words[k : k + n]) for k in range(len(words) - n + 1))
    params: dict[str, str | int] = {"corpus": CORPUS, "attribute": "word", "n": n, "within": "none",
                                    "limit": 100_000}
    whole = await one.get("/api/v1/wordlist", params=params)
    cut = await five.get("/api/v1/wordlist", params=params)
    assert rows(cut) == rows(whole) == top(expected, 100_000)
    assert cut.json()["uncounted"] == whole.json()["uncounted"] == 0
    assert cut.json()["ngrams"] == whole.json()["ngrams"] == 12_762 - (n - 1)
    texts = (await five.get("/api/v1/wordlist", params={**params, "within": "text"})).json()
    assert texts["uncounted"] == 0 and texts["ngrams"] < cut.json()["ngrams"]
    table = await five.get("/api/v1/wordlist", params={**params, "limit": 10, "format": "tsv", "provenance": 1})
    assert "# uncounted_at_partition_cuts: 0" in table.text
