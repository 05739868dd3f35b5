"""Subcorpora (``GET /api/v1/subcorpus``, ``/api/v1/subcorpora``): the picker's values with their sizes
and a subcorpus's tokens and texts, judged by real CWB's ``cwb-scan-corpus`` (tokens per value of an
s-attribute) and by plain Python over ``tests/fixtures/tricky.vrt``, exact over one and five
partitions; subcorpora saved, shared with a group, used by ``subcorpus=ID`` in searches, analyses,
word lists, keyword lists and downloads, and deleted — each by whom it may be."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from collections import Counter
from pathlib import Path

import httpx
import pandas as pd
import pytest

from cowbird.frontend.accounts import Accounts, Database, sqlite_url
from tests.frontend.conftest import TRICKY as CORPUS
from tests.frontend.conftest import Partitioned
from tests.support import read_tricky, reference_cqp

pytestmark = pytest.mark.anyio

TOKENS = {"ada": "ada-token-0123456789abcdef", "bob": "bob-token-0123456789abcdef",
          "carl": "carl-token-0123456789abcdef"}


def scan_values(parts: Partitioned, attribute: str) -> Counter[str]:
    """Real ``cwb-scan-corpus``'s tokens per value of an s-attribute."""
    binary = reference_cqp().parent / "cwb-scan-corpus"
    done = subprocess.run([str(binary), "-q", "-r", str(parts.registry), parts.ids[0].upper(), attribute],
                          capture_output=True, text=True, check=True)
    counts: Counter[str] = Counter()
    for line in done.stdout.splitlines():
        frequency, value = line.split("\t", 1)
        counts[value] += int(frequency)
    return counts


def members(parts: Partitioned) -> None:
    """ada and bob in group lab, carl in none; each with an API token."""
    database = Database(sqlite_url(parts.registry.parent / "accounts.sqlite3"))
    accounts = Accounts(database)
    with database.session() as session:
        for name, secret in TOKENS.items():
            if accounts.users.find(session, name) is None:
                user, _ = accounts.users.add(session, name, f"{name}@uni.example", "tests")
                if name != "carl":
                    accounts.users.grant(session, user, "group:lab", "tests")
                accounts.tokens.import_secret(session, user, "tests", secret)
    database.close()


def as_(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[name]}"}


@pytest.mark.slow
async def test_the_picker_lists_values_with_the_sizes_cwb_scan_corpus_counts(
    one: httpx.AsyncClient, five: httpx.AsyncClient, tricky_one: Partitioned,
) -> None:
    for client in (one, five):
        await _picker(client, tricky_one)


async def _picker(client: httpx.AsyncClient, tricky_one: Partitioned) -> None:
    tokens = read_tricky()
    genres = scan_values(tricky_one, "text_genre")
    answer = await client.get("/api/v1/subcorpus", params={"corpus": CORPUS, "values": "text_genre"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["complete"] and body["tokens"] == body["corpus_tokens"] == len(tokens) == sum(genres.values())
    assert body["texts"] == body["corpus_texts"] == len({t.text["id"] for t in tokens}) == 40
    assert [v["value"] for v in body["values"]] == sorted(genres, key=lambda g: (g == "", g))  # empty last
    assert {v["value"]: v["tokens"] for v in body["values"]} == dict(genres)
    texts_of = Counter(genre for genre, _ in {(t.text["genre"], t.text["id"]) for t in tokens})
    assert {v["value"]: v["texts"] for v in body["values"]} == dict(texts_of)
    assert body["values_total"] == len(genres)

    # within a subcorpus: the years of the news and reviews that are not from 2005
    chosen = [t for t in tokens if t.text["genre"] in ("news", "reviews") and t.text["year"] != "2005"]
    answer = await client.get("/api/v1/subcorpus", params={
        "corpus": CORPUS, "filter": ["text_genre~news|reviews", "text_year!~2005"], "values": "text_year",
        "order": "tokens"})
    body = answer.json()
    assert body["tokens"] == len(chosen) and body["texts"] == len({t.text["id"] for t in chosen})
    assert body["per_cent"] == round(len(chosen) * 100 / len(tokens), 3)
    years = Counter(t.text["year"] for t in chosen)
    assert [(v["value"], v["tokens"]) for v in body["values"]] == sorted(years.items(), key=lambda i: (-i[1],
                                                                                                        _year(i[0])))
    # each value's filter chooses exactly its tokens
    for value in body["values"][:3]:
        alone = (await client.get("/api/v1/subcorpus", params={"corpus": CORPUS, "filter": value["filter"]})).json()
        assert alone["tokens"] == years[value["value"]] + sum(
            1 for t in tokens if t.text["year"] == value["value"] and t not in chosen), value

    # by value, years sort as numbers with the empty value last; match and paging
    answer = await client.get("/api/v1/subcorpus", params={"corpus": CORPUS, "values": "text_year"})
    values = [v["value"] for v in answer.json()["values"]]
    assert values == sorted(values, key=_year) and values[-1] == ""
    answer = await client.get("/api/v1/subcorpus", params={"corpus": CORPUS, "values": "text_year",
                                                           "match": "200[0-4]", "offset": 1, "limit": 2})
    body = answer.json()
    assert body["values_total"] == len({y for y in values if y[:3] == "200" and y[3:] in "01234" and y})
    assert [v["value"] for v in body["values"]] == [y for y in values if y and "2000" <= y <= "2004"][1:3]


def _year(value: str) -> tuple[int, int]:
    return (1, 0) if not value else (0, int(value))


async def test_the_picker_refuses_what_it_cannot_list(one: httpx.AsyncClient) -> None:
    cases: list[tuple[dict[str, str | int], str]] = [
        ({"values": "text"}, "no s-attribute with values named 'text'"),
        ({"values": "text_genre", "match": "(news"}, "match="),
        ({"filter": "nothing~x"}, "nothing"),
        ({"subcorpus": "no-such-id"}, "log in to use saved subcorpora"),
        ({"values": "text_genre", "limit": 100_001}, "at most 100,000")]
    for params, said in cases:
        answer = await one.get("/api/v1/subcorpus", params={"corpus": CORPUS, **params})
        assert answer.status_code in (400, 404) and said in answer.json()["detail"], (params, answer.text)


async def test_the_values_download_as_a_file_with_provenance(one: httpx.AsyncClient) -> None:
    answer = await one.get("/api/v1/subcorpus", params={"corpus": CORPUS, "values": "text_genre", "format": "csv",
                                                        "provenance": 1, "filter": "text_year~20.*"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    text = answer.text
    assert '"filters": ["text_year~20.*"]' in text or "text_year~20.*" in text
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("text_genre,"))
    frame = pd.read_csv(io.StringIO("\n".join(lines[start:])), keep_default_na=False)
    chosen = Counter(t.text["genre"] for t in read_tricky() if t.text["year"].startswith("20"))
    assert dict(zip(frame["text_genre"], frame["tokens"], strict=True)) == dict(chosen)


@pytest.mark.slow
async def test_subcorpora_are_saved_shared_with_a_group_used_and_deleted(
    five: httpx.AsyncClient, tricky_five: Partitioned, tmp_path: Path,
) -> None:
    members(tricky_five)
    tokens = read_tricky()
    news = [t for t in tokens if t.text["genre"] == "news"]
    assert (await five.get("/api/v1/subcorpora")).status_code == 401
    saved = await five.post("/api/v1/subcorpora", headers=as_("ada"), json={
        "name": " news  texts ", "corpus": CORPUS, "filters": ["text_genre~news"], "group": "lab"})
    assert saved.status_code == 200, saved.text
    body = saved.json()
    assert body["name"] == "news texts" and body["tokens"] == len(news) and body["group"] == "lab" and body["mine"]
    assert body["texts"] == len({t.text["id"] for t in news}) and body["filters"] == ["text_genre~news"]
    slug = body["id"]
    private = (await five.post("/api/v1/subcorpora", headers=as_("ada"), json={
        "name": "old", "corpus": CORPUS, "filters": ["text_year~199.*|200[0-4]"]})).json()
    assert private["group"] is None

    # who sees which
    assert [s["name"] for s in (await five.get("/api/v1/subcorpora", headers=as_("ada"))).json()["data"]] == [
        "news texts", "old"]
    seen = (await five.get("/api/v1/subcorpora", headers=as_("bob"))).json()["data"]
    assert [(s["name"], s["owner"], s["mine"]) for s in seen] == [("news texts", "ada", False)]
    assert (await five.get("/api/v1/subcorpora", headers=as_("carl"))).json()["data"] == []
    assert (await five.get(f"/api/v1/subcorpora/{slug}", headers=as_("carl"))).status_code == 404
    assert (await five.get(f"/api/v1/subcorpora/{private['id']}", headers=as_("bob"))).status_code == 404

    # bob searches, counts and lists within it: the same as with its filter
    for path, params in (("/api/v1/query", {"q": "the"}), ("/api/v1/frequency", {"q": "the", "by": "word"}),
                         ("/api/v1/wordlist", {"limit": 20}), ("/api/v1/subcorpus", {"values": "text_year"})):
        within = await five.get(path, headers=as_("bob"), params={"corpus": CORPUS, "subcorpus": slug, **params})
        filtered = await five.get(path, headers=as_("bob"), params={"corpus": CORPUS, "filter": "text_genre~news",
                                                                    **params})
        assert within.status_code == 200, within.text
        a, b = within.json(), filtered.json()
        for varying in ("elapsed_ms", "partitions", "timing", "cache"):
            a.pop(varying, None)
            b.pop(varying, None)
        assert a == b, path
    hits = (await five.get("/api/v1/query", headers=as_("bob"), params={
        "corpus": CORPUS, "q": "[]", "syntax": "cqp", "subcorpus": slug})).json()
    assert hits["total"] == len(news)
    export = await five.get("/api/v1/export", headers=as_("bob"), params={
        "corpus": CORPUS, "q": "the", "subcorpus": slug, "meta": "text_genre", "provenance": 1})
    assert export.status_code == 200 and "text_genre~news" in export.text
    assert {line.split("\t")[-1] for line in export.text.splitlines()[1:] if line and not line.startswith("#")
            and "\t" in line} <= {"news", "text_genre"}
    keywords = await five.get("/api/v1/keywords", headers=as_("bob"), params={
        "corpus": CORPUS, "subcorpus": slug, "reference_filter": "text_genre!~news", "min": 3})
    same = await five.get("/api/v1/keywords", headers=as_("bob"), params={
        "corpus": CORPUS, "filter": "text_genre~news", "reference_filter": "text_genre!~news", "min": 3})
    assert keywords.status_code == 200 and keywords.json()["rows"] == same.json()["rows"]
    reverse = await five.get("/api/v1/keywords", headers=as_("bob"), params={
        "corpus": CORPUS, "filter": "text_genre!~news", "reference_subcorpus": slug, "min": 3})
    assert reverse.status_code == 200 and reverse.json()["reference_filters"] == ["text_genre~news"]

    # the search page with subcorpus= in its URL: the page with its corpus and filters
    page = await five.get("/", headers=as_("bob"), params={"q": "the", "subcorpus": slug, "filter": "text_year~2005"})
    assert page.status_code == 303
    assert page.headers["location"] == f"/?corpus={CORPUS}&q=the&filter=text_genre~news&filter=text_year~2005"
    missing = await five.get("/", headers=as_("carl"), params={"q": "the", "subcorpus": slug})
    assert missing.status_code == 404 and "not shared with you" in missing.text

    # what is refused, and said
    carl = await five.get("/api/v1/query", headers=as_("carl"), params={"corpus": CORPUS, "q": "the",
                                                                         "subcorpus": slug})
    assert carl.status_code == 404 and "not shared with you" in carl.json()["detail"]
    for asked, said in (({"name": "x", "corpus": CORPUS, "filters": ["text_genre~news"], "group": "other"},
                         "you are not in group 'other'"),
                        ({"name": "x", "corpus": CORPUS, "filters": ["text_genre~nothing-like-it"]},
                         "choose no tokens"),
                        ({"name": "x", "corpus": CORPUS, "filters": ["nothing~x"]}, "nothing"),
                        ({"name": "x", "corpus": "elsewhere", "filters": ["text_genre~news"]}, "elsewhere")):
        answer = await five.post("/api/v1/subcorpora", headers=as_("ada"), json=asked)
        assert answer.status_code in (400, 404) and said in answer.json()["detail"], (asked, answer.text)
    assert (await five.delete(f"/api/v1/subcorpora/{slug}", headers=as_("bob"))).status_code == 404  # not his

    # replaced under the same name (the ID kept), then deleted
    again = (await five.post("/api/v1/subcorpora", headers=as_("ada"), json={
        "name": "news texts", "corpus": CORPUS, "filters": ["text_genre~news", "text_year~2010"]})).json()
    assert again["id"] == slug and again["group"] is None
    assert (await five.get("/api/v1/subcorpora", headers=as_("bob"))).json()["data"] == []  # no longer shared
    left = await five.delete(f"/api/v1/subcorpora/{slug}", headers=as_("ada"))
    assert left.status_code == 200 and [s["name"] for s in left.json()["data"]] == ["old"]
    gone = await five.get("/api/v1/query", headers=as_("ada"), params={"corpus": CORPUS, "q": "the",
                                                                        "subcorpus": slug})
    assert gone.status_code == 404


async def test_a_shared_subcorpus_stops_when_its_owner_leaves_the_group_or_is_suspended(
    five: httpx.AsyncClient, tricky_five: Partitioned,
) -> None:
    """bob uses ada's subcorpus shared with lab only while ada is an approved member of lab: when she
    leaves the group, or is suspended, it is neither listed for him nor usable (404, as one never
    shared), and her saved searches' share links stop working."""
    from cowbird.frontend.accounts.models import State

    members(tricky_five)
    database = Database(sqlite_url(tricky_five.registry.parent / "accounts.sqlite3"))
    accounts = Accounts(database)

    def change(what: str) -> None:
        with database.session() as session:
            ada = accounts.users.find(session, "ada")
            assert ada is not None
            if what == "leave":
                accounts.users.revoke(session, ada, "group:lab", "tests")
            elif what == "join":
                accounts.users.grant(session, ada, "group:lab", "tests")
            else:
                accounts.users.decide(session, ada, State(what), "tests", "tests")

    saved = (await five.post("/api/v1/subcorpora", headers=as_("ada"), json={
        "name": "lab news", "corpus": CORPUS, "filters": ["text_genre~news"], "group": "lab"})).json()
    slug = saved["id"]
    search = (await five.post("/api/v1/saved", headers=as_("ada"), json={
        "name": "news", "url": f"/?corpus={CORPUS}&q=the&token=secret-of-ada"})).json()
    assert "token" not in search["url"]  # a token never goes into a saved URL or its share link

    async def bob_uses() -> tuple[bool, int]:
        listed = any(s["id"] == slug for s in (await five.get("/api/v1/subcorpora", headers=as_("bob"))).json()["data"])
        used = await five.get("/api/v1/query", params={"corpus": CORPUS, "q": "the", "subcorpus": slug},
                              headers=as_("bob"))
        return listed, used.status_code

    link = search["link"]
    assert await bob_uses() == (True, 200)
    assert (await five.get(link)).status_code == 303
    change("leave")
    assert await bob_uses() == (False, 404)
    change("join")
    assert await bob_uses() == (True, 200)
    change("suspended")
    assert await bob_uses() == (False, 404)
    assert (await five.get(link)).status_code == 404
    change("approved")
    assert await bob_uses() == (True, 200)
    database.close()


async def test_hostile_inputs_to_saved_objects_are_refused_with_the_reason(
    five: httpx.AsyncClient, tricky_five: Partitioned,
) -> None:
    """A lone surrogate in a JSON body (valid JSON, no text): 422 before anything is stored; a line's
    position beyond any database integer: 422; one outside the corpus: 400 naming its size."""
    members(tricky_five)
    search = (await five.post("/api/v1/saved", headers=as_("ada"), json={
        "name": "hostile", "url": f"/?corpus={CORPUS}&q=the"})).json()
    slug = search["link"].rsplit("/", 1)[1]
    lone = await five.post(f"/api/v1/saved/{slug}/labels", headers={**as_("ada"), "Content-Type": "application/json"},
                           content=b'{"labels": ["x\\ud800"]}')
    assert lone.status_code == 422 and lone.json()["code"] == "invalid_request", lone.text
    assert "lone surrogate" in lone.json()["detail"]
    paired = await five.post(f"/api/v1/saved/{slug}/labels", headers={**as_("ada"), "Content-Type": "application/json"},
                             content=b'{"labels": ["\\ud83d\\ude00 fine"]}')
    assert paired.status_code == 200 and paired.json()["labels"][0] == "\U0001f600 fine"
    huge = await five.post(f"/api/v1/saved/{slug}/categories", headers=as_("ada"),
                           json={"position": 2**70, "matchend": 2**70, "category": 1})
    assert huge.status_code == 422, huge.text
    size = sum(1 for _ in read_tricky())
    outside = await five.post(f"/api/v1/saved/{slug}/categories", headers=as_("ada"),
                              json={"position": size + 5, "matchend": size + 5, "category": 1})
    assert outside.status_code == 400 and f"outside the corpus {CORPUS} ({size:,} tokens)" in outside.json()["detail"]


async def test_a_filter_in_csv_metadata_never_starts_a_spreadsheet_cell(five: httpx.AsyncClient) -> None:
    """A filter's text in a CSV file's metadata lines keeps its exact value as JSON, in a quoted CSV
    cell: a spreadsheet reading the line as CSV never gets a cell ``=1+1``."""
    hostile = "text_genre~news|,=1+1,x"
    export = await five.get("/api/v1/export", params={"corpus": CORPUS, "q": "the", "format": "csv",
                                                      "provenance": "true", "filter": hostile, "limit": 5})
    assert export.status_code == 200, export.text
    line = next(line for line in export.text.splitlines() if line.startswith("# filters,"))
    cells = next(csv.reader([line]))
    assert len(cells) == 2 and all(not cell.lstrip().startswith(("=", "+", "-", "@")) for cell in cells)
    assert cells[0] == "# filters" and json.loads(cells[1]) == [hostile]


async def test_hits_per_million_of_a_filtered_search_are_of_the_texts_searched(
    one: httpx.AsyncClient, five: httpx.AsyncClient,
) -> None:
    """With filters, the preview's rate and the frequency list's rates are per million tokens of the
    texts the filters choose (counted here from tricky.vrt with plain Python), the corpus's rate
    beside it; without filters both are of the corpus."""
    tokens = read_tricky()
    chosen = [t for t in tokens if t.text["genre"] == "news"]
    hits = [t for t in chosen if t.word == "the"]
    assert hits and len(chosen) < len(tokens)
    for client in (one, five):
        body = (await client.get("/api/v1/query", params={"corpus": CORPUS, "q": "the", "limit": 0,
                                                          "filter": "text_genre~news"})).json()
        assert body["total"] == len(hits) and body["tokens"] == len(chosen)
        assert body["per_million"] == pytest.approx(len(hits) * 1e6 / len(chosen))
        assert body["corpus_per_million"] == pytest.approx(len(hits) * 1e6 / len(tokens))
        plain = (await client.get("/api/v1/query", params={"corpus": CORPUS, "q": "the", "limit": 0})).json()
        everywhere = sum(t.word == "the" for t in tokens)
        assert plain["tokens"] == len(tokens)
        assert plain["per_million"] == plain["corpus_per_million"] == pytest.approx(everywhere * 1e6 / len(tokens))
        frequency = (await client.get("/api/v1/frequency", params={"corpus": CORPUS, "q": "[word='the'%c]",
                                                                   "syntax": "cqp", "by": "word",
                                                                   "filter": "text_genre~news"})).json()
        counts = Counter(t.word for t in chosen if t.word.lower() == "the")
        assert frequency["tokens"] == len(chosen)
        assert {r["value"]: r["per_million"] for r in frequency["rows"]} == {
            w: pytest.approx(c * 1e6 / len(chosen)) for w, c in counts.items()}
        table = await client.get("/api/v1/frequency", params={"corpus": CORPUS, "q": "[word='the'%c]", "syntax": "cqp",
                                                              "by": "word", "filter": "text_genre~news",
                                                              "format": "tsv", "provenance": 1})
        assert f"# tokens_searched: {len(chosen)}" in table.text
