"""The one rule for a credential (``frontend_api/cowbird/frontend/credentials.py``), on every route of
the API as the OpenAPI document lists them: a header that is empty, not ``Bearer <token>``, or names
no valid token is ``401 unauthorized`` saying which, before the route runs (its parameters and body
are not even read); no credential at all stays anonymous. The same over real HTTP, with the
background process, is ``test_credentials_and_broken_exports.py``."""

from __future__ import annotations

import re

import httpx
import pytest

from cowbird.core.errors import HttpError, Unauthorized
from cowbird.frontend.background import forwardable
from cowbird.frontend.credentials import presented_token
from tests.frontend.conftest import API_TOKEN
from tests.support import assert_problem

pytestmark = pytest.mark.anyio

BAD = {
    "": "the Authorization header is empty",
    "Bearer ": "holds 'Bearer ' with no token: set COWBIRD_TOKEN",
    "Bearer": "holds 'Bearer ' with no token",
    "Basic dXNlcjpwYXNz": "holds the scheme 'Basic', not Bearer",
    "cb_abc": "holds no scheme (a bare word), not Bearer",
    "Bearer a b": "more than one word after 'Bearer'",
    "Bearer not-a-token": "the API token is not valid",
}
"""Each bad ``Authorization`` header and what its refusal says."""


def test_what_a_header_presents() -> None:
    assert presented_token(None, None) is None and presented_token(None, " ") is None  # anonymous
    assert presented_token("Bearer abc", None) == "abc" == presented_token("bearer \tabc ", "other")
    assert presented_token(None, "abc") == "abc"
    for header, said in BAD.items():
        if "not valid" in said:
            continue  # a well-formed header: the account database decides
        with pytest.raises(Unauthorized, match=re.escape(said)):
            presented_token(header, "a-token-in-the-query-too")
    with pytest.raises(Unauthorized) as refused:
        presented_token("Basic " + "x" * 200, None)
    assert "x" * 30 not in str(refused.value)  # nothing of the credential is repeated


@pytest.mark.slow  # 1.2 s here (make quick leaves it out)
async def test_every_api_route_refuses_a_bad_credential_saying_why(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    routes = [
        (method.upper(), re.sub(r"\{[^}]+\}", "1", path))
        for path, methods in paths.items()
        if path.startswith("/api/")
        for method in methods
    ]
    assert len(routes) >= 30 and ("GET", "/api/v1/export") in routes and ("POST", "/api/v1/saved") in routes
    for method, path in routes:
        for header, said in BAD.items():
            answer = await client.request(method, path, headers={"Authorization": header})
            body = assert_problem(answer, 401, "unauthorized")
            assert said in body["detail"] and answer.headers["www-authenticate"] == "Bearer", (method, path, body)
        answer = await client.request(method, path, params={"token": "not-a-token"})
        assert said in assert_problem(answer, 401, "unauthorized")["detail"], (method, path)


async def test_a_good_token_and_no_credential_are_served(client: httpx.AsyncClient) -> None:
    params = {"corpus": "sample", "q": "house"}
    anonymous = await client.get("/api/v1/query", params=params)
    assert anonymous.status_code == 200 and anonymous.json()["total"] > 0
    for headers in ({"Authorization": f"Bearer {API_TOKEN}"}, {"Authorization": f"bearer   {API_TOKEN}  "}):
        answer = await client.get("/api/v1/frequency", params={**params, "by": "word"}, headers=headers)
        assert answer.status_code == 200 and answer.json()["total"] == anonymous.json()["total"]
    by_query = await client.get("/api/v1/saved", params={"token": API_TOKEN})
    assert by_query.status_code == 200 and by_query.json() == {"data": []}


def test_what_is_forwarded_to_the_background_process_is_always_a_valid_header() -> None:
    """What a server read may still be refused by the client between the processes (h11): white space
    around a value is not a part of it and goes; a value or name HTTP does not allow is refused (400)
    naming it, never a failed forwarding (``LocalProtocolError``, once a 503)."""
    raw = [
        (b"host", b"front"),
        (b"authorization", b"Bearer abc "),
        (b"x-note", b"\t a  b \t"),
        (b"connection", b"x"),
        (b"x-cowbird-forwarded", b"{}"),
    ]
    assert forwardable(raw) == [(b"host", b"front"), (b"authorization", b"Bearer abc"), (b"x-note", b"a  b")]
    for name, value in ((b"x-odd", b"a\x0bb"), (b"x-odd", b"a\nb"), (b"x-odd", b"a\x00"), (b"x odd", b"a")):
        refused = forwardable([(b"host", b"front"), (name, value)])
        assert isinstance(refused, HttpError) and refused.status == 400 and name.decode() in str(refused)
