"""Filters beside the regular expressions (issue 65, item 9): ``ATTR=VALUE`` (equals: a value with
regex metacharacters matches only itself), ``ATTR!=VALUE``, and ``ATTR:FROM..TO`` (a numeric range,
both ends included, open at either; values that are not numbers never match). Judged over the API by
counts made here in plain Python from the texts the fixture's VRT is written from, with the native
engine and with real CQP (the cwb engine, where CQP is built), in searches, subcorpus sizes, rates
and saved subcorpora; and the errors that name the filter and say why."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from cowbird.engines import EngineOptions, QueryEngine, open_engine
from cowbird.frontend import CorpusConfig, FrontendSettings
from cowbird.frontend.settings import AccountSettings, NodeAccess
from cowbird.node import NodeSettings
from cowbird.node import create_app as create_node
from cowbird.query.numeric_range import NUMBER
from tests.frontend.conftest import API_TOKEN, NODE_TOKEN, Partitioned, api_account, front_client, tiny_corpus
from tests.support import reference_cqp

pytestmark = pytest.mark.anyio

TEXTS = [  # id, year, label; text i holds i + 1 tokens
    ("t0", "2005", "a.b"),
    ("t1", "2010", "axb"),
    ("t2", "2012.5", "(x)"),
    ("t3", "2015", "x"),
    ("t4", "2016", "a.b"),
    ("t5", "02011", ""),
    ("t6", "-3", "ab"),
    ("t7", "abc", "a.bc"),
    ("t8", "", "A.B"),
    ("t9", "2015.0001", "(x)y"),
    ("t10", "2015.000", "xx"),
    ("t11", "1e3", "x|y"),
]
AUTH = {"Authorization": f"Bearer {API_TOKEN}"}


def vrt() -> str:
    return "".join(
        f'<text id="{i}" year="{year}" label="{label}">\n<s>\n' + "w\n" * (n + 1) + "</s>\n</text>\n"
        for n, (i, year, label) in enumerate(TEXTS)
    )


def tokens_where(keep: Callable[[str, str], bool]) -> tuple[int, int]:
    """The tokens and texts of the texts whose (year, label) ``keep`` keeps."""
    kept = [n + 1 for n, (_, year, label) in enumerate(TEXTS) if keep(year, label)]
    return sum(kept), len(kept)


def in_range(low: str | None, high: str | None) -> Callable[[str, str], bool]:
    def keep(year: str, _: str) -> bool:
        if not NUMBER.fullmatch(year):
            return False
        return (low is None or Decimal(year) >= Decimal(low)) and (high is None or Decimal(year) <= Decimal(high))

    return keep


CASES: list[tuple[list[str], Callable[[str, str], bool]]] = [
    (["text_label=a.b"], lambda _, label: label == "a.b"),
    (["text_label=(x)"], lambda _, label: label == "(x)"),
    (["text_label=x|y"], lambda _, label: label == "x|y"),
    (["text_label!=a.b"], lambda _, label: label != "a.b"),
    (["text_label~a.b"], lambda _, label: label in ("a.b", "axb")),  # the regex, as before
    (["text_year:2010..2015"], in_range("2010", "2015")),
    (["text_year:2010.."], in_range("2010", None)),
    (["text_year:..2010"], in_range(None, "2010")),
    (["text_year:2012.5..2015"], in_range("2012.5", "2015")),
    (["text_year:-5..0"], in_range("-5", "0")),
    (["text_year:2015..2015"], in_range("2015", "2015")),
    (["text_year:2010..2016", "text_label!=a.b"], lambda y, label: in_range("2010", "2016")(y, "") and label != "a.b"),
]


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    return tiny_corpus(tmp_path_factory.mktemp("labelled"), "labelled", vrt(), "text:0+id+year+label")


async def served(parts: Partitioned, engines: dict[str, QueryEngine], base: Path) -> AsyncIterator[httpx.AsyncClient]:
    node = create_node(NodeSettings(registry=parts.registry, token=NODE_TOKEN), engines=engines)
    corpus = CorpusConfig(
        name="labelled", title="Labelled", manifest=parts.manifest, nodes={pid: ["http://node-a"] for pid in parts.ids}
    )
    settings = FrontendSettings(
        corpora=[corpus],
        nodes=NodeAccess(token=NODE_TOKEN),
        allowed_hosts=["front"],
        accounts=AccountSettings(database_file=api_account(base / "accounts.sqlite3")),
    )
    async for client in front_client(settings, {"node-a": node}):
        yield client


@pytest.fixture(params=["native", "cwb"])
async def client(
    request: pytest.FixtureRequest, labelled: Partitioned, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    options = EngineOptions(cqp_binary=str(reference_cqp())) if request.param == "cwb" else None
    engines = {pid: open_engine(labelled.registry, pid, request.param, options) for pid in labelled.ids}
    async for c in served(labelled, engines, tmp_path):
        yield c


@pytest.mark.slow  # 2.0 s here (make quick leaves it out)
async def test_equals_and_ranges_choose_exactly_the_texts_in_searches_sizes_and_rates(
    client: httpx.AsyncClient,
) -> None:
    whole, _ = tokens_where(lambda *_: True)
    for filters, keep in CASES:
        tokens, texts = tokens_where(keep)
        found = await client.get(
            "/api/v1/query", params={"corpus": "labelled", "q": "[]", "syntax": "cqp", "filter": filters}
        )
        assert found.status_code == 200, (filters, found.text)
        body = found.json()
        assert (body["total"], body["tokens"]) == (tokens, tokens), filters  # every token of the texts is a hit
        if tokens:
            assert body["per_million"] == pytest.approx(1e6), filters  # the rate within the texts chosen
            assert body["corpus_per_million"] == pytest.approx(tokens / whole * 1e6), filters
        size = await client.get("/api/v1/subcorpus", params={"corpus": "labelled", "filter": filters})
        assert size.status_code == 200, (filters, size.text)
        assert (size.json()["tokens"], size.json()["texts"]) == (tokens, texts), filters


@pytest.mark.slow  # 2.7 s here (make quick leaves it out)
async def test_a_saved_subcorpus_keeps_its_range_and_equals_filters_and_an_old_regex_one_works(
    client: httpx.AsyncClient,
) -> None:
    for filters, keep in [
        (
            ["text_year:2010..2015", "text_label!=(x)"],
            lambda y, label: in_range("2010", "2015")(y, "") and label != "(x)",
        ),
        (["text_year~201.*"], lambda y, _: y.startswith("201")),
    ]:
        tokens, texts = tokens_where(keep)
        saved = await client.post(
            "/api/v1/subcorpora",
            headers=AUTH,
            json={"name": " ".join(filters), "corpus": "labelled", "filters": filters},
        )
        assert saved.status_code == 200, saved.text
        body = saved.json()
        assert (body["filters"], body["tokens"], body["texts"]) == (filters, tokens, texts)
        found = await client.get(
            "/api/v1/query",
            headers=AUTH,
            params={"corpus": "labelled", "q": "[]", "syntax": "cqp", "subcorpus": body["id"]},
        )
        assert found.status_code == 200, found.text
        assert (found.json()["total"], found.json()["tokens"]) == (tokens, tokens)


@pytest.mark.parametrize(
    ("text", "code", "says"),
    [
        ("text_year:abc..2015", "bad_parameter", "'abc' is not a number"),
        ("text_year:2015..2010", "bad_parameter", "from 2015 is above to 2010"),
        ("text_year:..", "bad_parameter", "a range needs a bound"),
        ("text_year:2010", "bad_parameter", "a range is written FROM..TO"),
        ("text_year!:2010..2015", "bad_parameter", "a range cannot be negated"),
        ("text_nope=2010", "unknown_attribute", "text_nope"),
        ("text_year", "bad_parameter", "ATTRIBUTE=VALUE (equals)"),
    ],
)
async def test_a_bad_filter_is_refused_naming_it_and_why(
    labelled: Partitioned,
    tmp_path: Path,
    text: str,
    code: str,
    says: str,
) -> None:
    engines = {pid: open_engine(labelled.registry, pid) for pid in labelled.ids}
    async for client in served(labelled, engines, tmp_path):
        for path, more in [
            ("/api/v1/query", {"q": "w"}),
            ("/api/v1/subcorpus", {}),
            ("/api/v1/frequency", {"q": "w", "by": "word"}),
        ]:
            answer = await client.get(path, params={"corpus": "labelled", "filter": text, **more})
            assert answer.status_code == 400, (path, answer.text)
            problem = answer.json()
            assert problem["code"] == code and repr(text) in problem["detail"] and says in problem["detail"], problem
