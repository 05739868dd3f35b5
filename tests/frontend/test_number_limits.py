"""Numbers too big for their type are the client's error on every route: ``400 bad_parameter``
naming the parameter, never a 500 from an overflow deep inside (``/api/v1/wordlist?min=`` with 309
digits was ``OverflowError``), nor a silent answer. Every numeric query and path parameter of every
GET route in the OpenAPI schema is sent each hostile value: a 309-digit integer either sign, one past
a 64-bit integer either way, ``1e309`` (a float that overflows to infinity), ``inf``, ``-inf``, ``nan``."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support import assert_problem

pytestmark = pytest.mark.anyio

HOSTILE = ("1" + "0" * 309, "-1" + "0" * 309, str(2**63), str(-(2**63) - 1), "1e309", "-1e309", "inf", "-inf",
           "nan", "NaN")
BASE = {"corpus": "sample", "q": "the", "headword": "the", "reference": "big"}
"""Values for the parameters a route needs besides the number (only those the route takes are sent)."""


INT64_EDGES = (str(2**63), str(-(2**63) - 1))
"""Too big for a whole number (a 64-bit integer), not for a decimal: sent to integer parameters only."""


def _types(parameter: dict[str, Any]) -> set[str]:
    schema = parameter.get("schema", {})
    return {str(schema.get("type"))} | {str(each.get("type")) for each in schema.get("anyOf", [])}


def _numeric(parameter: dict[str, Any]) -> bool:
    return bool(_types(parameter) & {"integer", "number"})


async def test_wordlist_min_beyond_any_integer_is_400(client: httpx.AsyncClient) -> None:
    for value in ("1" + "0" * 309, "1e309", str(2**63)):
        answer = await client.get("/api/v1/wordlist", params={"corpus": "sample", "min": value})
        assert assert_problem(answer, 400, "bad_parameter")["detail"].startswith("min: "), answer.text
    fine = await client.get("/api/v1/wordlist", params={"corpus": "sample", "min": str(2**63 - 1)})
    assert fine.status_code == 200 and fine.json()["rows"] == []  # the largest int64: nothing that frequent


@pytest.mark.slow  # 1.9 s here (make quick leaves it out)
async def test_every_numeric_parameter_of_every_route_refuses_hostile_numbers(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    wrong: list[str] = []
    tried = set()
    for path, operations in schema["paths"].items():
        operation = operations.get("get")
        if operation is None:
            continue
        parameters = operation.get("parameters", [])
        takes = {p["name"] for p in parameters if p["in"] == "query"}
        base = {name: value for name, value in BASE.items() if name in takes}
        for parameter in filter(_numeric, parameters):
            name = parameter["name"]
            tried.add(f"{path} {name}")
            whole = "integer" in _types(parameter)
            for value in (v for v in HOSTILE if whole or v not in INT64_EDGES):
                url = path.replace("{corpus}", "sample").replace("{position}", value if name == "position" else "60")
                query = base | ({name: value} if parameter["in"] == "query" else {})
                answer = await client.get(url, params=query)
                code = answer.json().get("code") if answer.headers.get("content-type", "").endswith("json") else None
                detail = str(answer.json().get("detail", "")) if code else ""
                if answer.status_code != 400 or code != "bad_parameter" or not detail.startswith(f"{name}: "):
                    wrong.append(f"{path} {name}={value[:12]}: {answer.status_code} {code} {detail[:100]}")
    assert len(tried) >= 50, sorted(tried)  # the schema's numeric parameters were found
    assert {"/api/v1/wordlist min", "/api/v1/keywords p", "/api/v1/ref/{corpus}/{position} position"} <= tried
    assert wrong == [], "\n".join(wrong)

