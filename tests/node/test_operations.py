"""The table of node operations (``cowbird.core.operations``, and the declared analyses'
operations: ``cowbird.core.declared``) is the one place each operation is declared: the node
answers every one of it at ``POST /v1/<name>`` with the table's models, and the table's check
believes what an honest node answers and refuses what it cannot be."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from cowbird.core import operations
from cowbird.core.declared import all_operations
from cowbird.core.operations import ImpossibleAnswer, Operation
from cowbird.core.wire import CountResponse, HitsResponse, SortBound, SortSpec
from cowbird.node.api import answered

pytestmark = pytest.mark.anyio

SAMPLE_TOKENS = 93  # backend_node/cowbird/data/sample.vrt
QUERY = '[lemma="house"]'  # 5 hits in the sample corpus
COMMON: dict[str, Any] = {"partition": "sample", "query": QUERY}
REQUESTS: dict[str, dict[str, Any]] = {
    "count": COMMON,
    "estimate": COMMON,
    "first": {**COMMON, "limit": 3},
    "hits": {**COMMON, "offset": 1, "limit": 3, "sort": {"key": "match.word"}},
    "frequency": {**COMMON, "attribute": "word"},
    "dispersion": {**COMMON, "attribute": "text", "hits": 5, "corpus_size": SAMPLE_TOKENS, "base": 0, "bins": 4},
    "distribution": {**COMMON, "attribute": "text_id"},
    "cooccurrence": {**COMMON, "attribute": "lemma", "left": 2, "right": 2},
    "marginals": {"partition": "sample", "attribute": "lemma", "values": ["the", "house", "no-such-lemma"]},
    "sortkeys": {**COMMON, "sort": {"key": "match.word"}, "limit": 10},
    "ngrams": {"partition": "sample", "attribute": "word", "n": 2, "top": 5, "values": [["the", "house"]]},
    "subcorpus": {"partition": "sample", "texts": "text", "attribute": "text_id"},
    "sketch": {"partition": "sample", "attribute": "lemma", "headword": "house", "strategy": "traditional",
               "tables": [{"queries": ['@1 [pos="JJ.*"] @[pos="NN.*"] within s']}],
               "relations": [{"table": 0, "totals_of": ["old", "no-such"]}, {"table": 0, "swapped": True}]},
    "ttr": {**COMMON, "attribute": "lemma", "label": "text_id"},
}
OPERATIONS = all_operations()


def test_the_node_answers_every_operation_of_the_table() -> None:
    assert answered() == {o.name for o in OPERATIONS} == set(REQUESTS)
    assert len({o.name for o in OPERATIONS}) == len(OPERATIONS)


async def test_each_operations_route_takes_and_gives_the_tables_models(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    for operation in OPERATIONS:
        route = spec["paths"][f"/v1/{operation.name}"]["post"]
        body = route["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        answer = route["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert body.endswith("/" + operation.request.__name__), (operation, body)
        assert answer.endswith("/" + operation.response.__name__), (operation, answer)


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda o: o.name)
async def test_an_honest_answer_passes_the_tables_check(client: httpx.AsyncClient,
                                                        operation: Operation[Any, Any]) -> None:
    request = operation.request.model_validate(REQUESTS[operation.name])
    response = await client.post(f"/v1/{operation.name}", json=request.model_dump(mode="json", exclude_unset=True))
    assert response.status_code == 200, response.text
    answer: BaseModel = operation.response.model_validate_json(response.content)
    operation.check(request, answer, SAMPLE_TOKENS)
    with pytest.raises(ImpossibleAnswer, match="answer refused"):  # the same answer, for a partition of one token
        operation.check(request, answer, 1)


def test_the_checks_say_what_is_impossible() -> None:
    request = operations.COUNT.request(partition="p", query=QUERY)
    with pytest.raises(ImpossibleAnswer, match="claims 11 hits"):
        operations.COUNT.check(request, CountResponse(partition="p", query=QUERY, total=11, elapsed_ms=1), 10)
    with pytest.raises(ImpossibleAnswer, match="answered another request"):
        operations.COUNT.check(request, CountResponse(partition="q", query=QUERY, total=1, elapsed_ms=1), 10)
    page = operations.HITS.request(partition="p", query=QUERY, limit=2)
    with pytest.raises(ImpossibleAnswer, match="sent 0 lines instead of 2"):
        operations.HITS.check(page, HitsResponse(partition="p", query=QUERY, total=5, offset=0, data=[],
                                                 elapsed_ms=1), 10)
    keys = operations.SORT_KEYS.request(partition="p", query=QUERY, sort=SortSpec(key="match.word"), limit=2,
                                        stop=SortBound(key=[[["a"], ["a"]]], base=5, rank=0))
    with pytest.raises(ImpossibleAnswer, match="placed a bound outside its hits"):
        operations.SORT_KEYS.check(keys, operations.SORT_KEYS.response(
            partition="p", query=QUERY, total=1, offset=0, keys=[], elapsed_ms=1, end=None), 10)


def test_the_core_names_no_node_path() -> None:
    """The core asks for operations, never for routes: the services map names to paths."""
    core = Path(operations.__file__).parent
    for module in core.glob("*.py"):
        code = [line for line in module.read_text(encoding="utf-8").splitlines()
                if '"/v1/' in line or "'/v1/" in line]
        assert not code, (module.name, code)
