"""The node's GET route with numbers (``/v1/context``, which the front end's ``/ref`` and
``/api/v1/context`` call): a position, ``tokens`` or ``end`` beyond a 64-bit integer is ``400
bad_parameter`` naming it, not an overflow in the engine."""

from __future__ import annotations

import httpx
import pytest

from tests.support import assert_problem

pytestmark = pytest.mark.anyio

HUGE = "1" + "0" * 309


@pytest.mark.parametrize(("path", "params", "name"), [
    (f"/v1/context/sample/{HUGE}", {}, "cpos"), (f"/v1/context/sample/-{HUGE}", {}, "cpos"),
    ("/v1/context/sample/0", {"tokens": HUGE}, "tokens"), ("/v1/context/sample/0", {"end": HUGE}, "end"),
    ("/v1/context/sample/0", {"end": str(2**63)}, "end"),
])
async def test_numbers_beyond_an_integer_are_the_callers_error(client: httpx.AsyncClient, path: str,
                                                              params: dict[str, str], name: str) -> None:
    answer = await client.get(path, params=params)
    assert assert_problem(answer, 400, "bad_parameter")["detail"].startswith(f"{name}: "), answer.text
    assert (await client.get("/v1/context/sample/0", params={"tokens": 2})).status_code == 200
