"""The account forms as a browser uses them (no JavaScript): register, wait for review, log in,
make and revoke an API token, the admin's decision; CSRF, cookie flags, throttling, sessions
ended by a suspension or a new password."""

from __future__ import annotations

import email
import email.message
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import Envelope
from click.testing import CliRunner
from fastapi import FastAPI
from sqlalchemy.orm import Session

from cowbird.commands.cli import main
from cowbird.frontend import CorpusConfig, FrontendSettings
from cowbird.frontend.accounts import Accounts, Database, State, sqlite_url
from cowbird.frontend.accounts.models import WebSession
from cowbird.frontend.accounts.service import BrowserSessions
from cowbird.frontend.settings import Access, AccessLevel, AccountSettings, NodeAccess, SmtpSettings
from tests.frontend.conftest import NODE_TOKEN, Partitioned, front_client
from tests.support import free_ports

pytestmark = pytest.mark.anyio

ABSTRACT = "We compare the use of modal verbs across genres of English web text for a corpus study. " * 3
PASSWORD = "correct horse battery"


def with_admin(path: Path, *registered: str) -> Accounts:
    """An account database with the admin ``boss`` (password PASSWORD) and pending ``registered`` users."""
    database = Database(sqlite_url(path))
    database.upgrade()
    accounts = Accounts(database)
    with database.session() as session:
        admin, _ = accounts.users.add(session, "boss", "boss@uni.example", "tests", admin=True)
        accounts.users.set_password(session, admin, PASSWORD, "tests")
        for name in registered:
            accounts.users.register(session, name, f"{name}@uni.example", "Uni", ABSTRACT, PASSWORD)
    return accounts


@pytest.fixture
async def site(sample_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
               ) -> AsyncIterator[tuple[httpx.AsyncClient, Accounts]]:
    accounts = with_admin(tmp_path / "accounts.sqlite3")
    database = accounts.database
    nodes_of = {pid: ["http://node-a" if k < 2 else "http://node-b"] for k, pid in enumerate(sample_parts.ids)}
    corpus = CorpusConfig(name="members", manifest=sample_parts.manifest, nodes=nodes_of,
                          access=Access(AccessLevel.LOGIN))
    settings = FrontendSettings(corpora=[corpus], nodes=NodeAccess(token=NODE_TOKEN), allowed_hosts=["front"],
                                accounts=AccountSettings(database_file=tmp_path / "accounts.sqlite3"))
    async for client in front_client(settings, nodes):
        yield client, accounts
    database.close()


def csrf_of(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, page.text
    return found.group(1)


async def login(client: httpx.AsyncClient, name: str, password: str = PASSWORD) -> httpx.Response:
    form = await client.get("/login")
    return await client.post("/login", data={"login": name, "password": password, "csrf": csrf_of(form)})


async def test_register_review_login_and_tokens(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site
    form = await client.get("/register")
    assert form.status_code == 200 and "at least 200 characters" in form.text
    short = await client.post("/register", data={"name": "ada", "email": "ada@uni.example", "affiliation": "Uni",
                                                 "abstract": "too short", "password": PASSWORD, "csrf": csrf_of(form)})
    assert short.status_code == 400 and "abstract: describe your research" in short.text
    assert 'value="ada@uni.example"' in short.text  # nothing typed is lost
    done = await client.post("/register", data={"name": "ada", "email": "ada@uni.example", "affiliation": "Uni",
                                                "abstract": ABSTRACT, "password": PASSWORD, "csrf": csrf_of(form)})
    assert done.status_code == 200 and "waiting for review" in done.text
    pending = await login(client, "ada")
    assert pending.status_code == 403 and "waiting for review" in pending.text
    assert "cowbird_session" not in client.cookies

    # the admin approves on the review page
    assert (await login(client, "boss")).status_code == 303
    review = await client.get("/admin/users")
    assert review.status_code == 200 and ABSTRACT.strip()[:60] in review.text
    asked = await client.post("/admin/users/decide", data={"name": "ada", "decision": "denied",
                                                           "csrf": csrf_of(review)})
    assert asked.status_code == 200 and "You are about to deny the registration of ada" in asked.text  # asked first
    assert 'class="danger">Deny ada</button>' in asked.text
    denied = await client.post("/admin/users/decide", data={"name": "ada", "decision": "denied", "confirm": "1",
                                                            "csrf": csrf_of(review)})
    assert denied.status_code == 400 and "reason: say why" in denied.text
    approved = await client.post("/admin/users/decide", data={"name": "ada", "decision": "approved",
                                                              "csrf": csrf_of(review)})
    assert approved.status_code == 303 and approved.headers["location"] == "/admin/users"
    said = await client.get("/admin/users")
    assert "ada is approved and may log in now." in said.text  # said, once
    assert "ada is approved" not in (await client.get("/admin/users")).text
    client.cookies.clear()

    # ada logs in, sees the login-only corpus, makes a token and uses it from a script
    assert (await client.get("/api/v1/corpora")).json()["total"] == 0
    answer = await login(client, "ADA@uni.example")  # the e-mail address, in any case
    assert answer.status_code == 303 and answer.headers["location"] == "/"  # the search, not the account page
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie  # plain HTTP here
    assert (await client.get("/api/v1/corpora")).json()["total"] == 1
    page = await client.get("/account")
    fair_use = re.sub(r"\s+", " ", page.text[page.text.index('<table class="budget">'):])
    assert ('<th scope="row">in the browser</th><td>4</td><td>10,000</td> <td>200,000 of 200,000</td> '
            "<td>14,400 s of 14,400 s</td>") in fair_use  # the rows of one download, as /api/v1/export allows them
    assert "Downloads of more than 10,000 rows need the <code>api_bulk</code> right" in fair_use
    made = await client.post("/account/tokens", data={"name": "laptop", "csrf": csrf_of(page)})
    secret = re.search(r'<pre class="token">([^<]+)</pre>', made.text)
    assert made.status_code == 200 and secret is not None
    assert secret.group(1) not in (await client.get("/account")).text  # shown once
    async with httpx.AsyncClient(transport=client._transport, base_url="http://front") as script:
        headers = {"Authorization": f"Bearer {secret.group(1)}"}
        assert (await script.get("/api/v1/query", params={"corpus": "members", "q": "house"}, headers=headers)
                ).json()["total"] == 3
        asked = await client.post("/account/tokens/revoke", data={"name": "laptop", "csrf": csrf_of(page)})
        assert "The token laptop stops working at once" in asked.text  # asked first
        assert (await script.get("/api/v1/corpora", headers=headers)).status_code == 200
        await client.post("/account/tokens/revoke", data={"name": "laptop", "csrf": csrf_of(page), "confirm": "1"})
        assert (await script.get("/api/v1/corpora", headers=headers)).status_code == 401


async def test_forms_need_their_csrf_token(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, _ = site
    await client.get("/login")
    forged = await client.post("/login", data={"login": "boss", "password": PASSWORD, "csrf": "made-up"})
    assert forged.status_code == 403 and forged.json()["code"] == "csrf_failed"
    assert (await login(client, "boss")).status_code == 303
    forged_token = await client.post("/account/tokens", data={"name": "x", "csrf": "made-up"})
    assert forged_token.status_code == 403
    missing = await client.post("/account/tokens", data={"name": "x"})
    assert missing.status_code == 422 and missing.json()["detail"].startswith("body.csrf")


async def test_failed_logins_are_throttled_alike_for_every_name(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, _ = site
    for name in ("boss", "nobody"):
        answers = [await login(client, name, "wrong password!") for _ in range(6)]
        assert [a.status_code for a in answers] == [400] * 5 + [429], name
        assert answers[0].text.count("the name or e-mail address or the password is wrong") == 1
        assert int(answers[-1].headers["retry-after"]) > 0
    assert (await login(client, "boss")).status_code == 429  # the account waits even with the right password


async def test_suspension_and_new_password_end_sessions(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site
    with accounts.database.session() as session:
        user, _ = accounts.users.add(session, "ada", "ada@uni.example", "tests")
        accounts.users.set_password(session, user, PASSWORD, "tests")
    assert (await login(client, "ada")).status_code == 303
    assert (await client.get("/account")).status_code == 200
    with accounts.database.session() as session:
        accounts.users.decide(session, accounts.users.get(session, "ada"), State.SUSPENDED, "boss", "holiday")
    gone = await client.get("/account")
    assert gone.status_code == 303 and gone.headers["location"] == "/login?next=/account"
    again = await login(client, "ada")
    assert again.status_code == 403 and "suspended" in again.text and "holiday" in again.text
    with accounts.database.session() as session:
        accounts.users.decide(session, accounts.users.get(session, "ada"), State.APPROVED, "boss", "")
    assert (await login(client, "ada")).status_code == 303
    page = await client.get("/account")
    changed = await client.post("/account/password", data={"current": PASSWORD, "new": "another long secret",
                                                           "csrf": csrf_of(page)})
    assert changed.status_code == 200 and "Password changed" in changed.text and "Log in" in header_of(changed)
    assert (await client.get("/account")).status_code == 303
    assert (await login(client, "ada", "another long secret")).status_code == 303


async def test_cookies_are_secure_behind_tls(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, _ = site
    async with httpx.AsyncClient(transport=client._transport, base_url="https://front") as tls:
        answer = await login(tls, "boss")
        assert answer.status_code == 303
        assert all("Secure" in value for value in answer.headers.get_list("set-cookie"))


class Sink:
    """An SMTP server that keeps what it receives (aiosmtpd)."""

    def __init__(self) -> None:
        self.messages: list[email.message.Message] = []

    async def handle_DATA(self, server: object, session: object, envelope: Envelope) -> str:  # noqa: N802
        self.messages.append(email.message_from_bytes(envelope.content))  # type: ignore[arg-type]
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[Sink, int]]:
    sink, port = Sink(), free_ports(1)[0]
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    yield sink, port
    controller.stop()


async def test_decisions_are_mailed(sample_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path,
                                    smtp: tuple[Sink, int]) -> None:
    sink, port = smtp
    with_admin(tmp_path / "accounts.sqlite3", "ada", "bo").database.close()
    nodes_of = {pid: ["http://node-a" if k < 2 else "http://node-b"] for k, pid in enumerate(sample_parts.ids)}
    corpus = CorpusConfig(name="sample", manifest=sample_parts.manifest, nodes=nodes_of)
    base: dict[str, Any] = {  # FrontendSettings's fields, values of their several types
        "corpora": [corpus], "nodes": NodeAccess(token=NODE_TOKEN), "allowed_hosts": ["front"],
        "accounts": AccountSettings(database_file=tmp_path / "accounts.sqlite3"),
        "public_url": "http://corpora.uni.example",
    }  # fmt: skip
    mailing = SmtpSettings(host="127.0.0.1", port=port, sender="corpora@uni.example")
    async for client in front_client(FrontendSettings(**base, smtp=mailing), nodes):
        await login(client, "boss")
        review = await client.get("/admin/users")
        answer = await client.post("/admin/users/decide", data={"name": "ada", "decision": "denied",
                                                                "reason": "not a research project", "confirm": "1",
                                                                "csrf": csrf_of(review)})
        assert answer.status_code == 303
        assert "The registration of ada is denied. An e-mail told them." in (await client.get("/admin/users")).text
    message = sink.messages[-1]
    assert (message["To"], message["From"]) == ("ada@uni.example", "corpora@uni.example")
    assert message["Subject"] == "Your cowbird registration was not approved"
    body = message.get_payload()
    assert "Reason: not a research project" in body and "http://corpora.uni.example/login" in body
    # no SMTP server listening: the decision stands and the admin is told
    unused = free_ports(1)[0]
    async for client in front_client(FrontendSettings(**base, smtp=SmtpSettings(host="127.0.0.1", port=unused,
                                                                            sender="corpora@uni.example")), nodes):
        await login(client, "boss")
        review = await client.get("/admin/users")
        answer = await client.post("/admin/users/decide", data={"name": "bo", "decision": "approved",
                                                                "csrf": csrf_of(review)})
        told = "bo is approved, but the e-mail to bo@uni.example could not be sent"
        assert answer.status_code == 200 and told in answer.text
        assert (await login(client, "bo")).status_code == 303


def test_the_command_line_mails_decisions_too(tmp_path: Path, smtp: tuple[Sink, int]) -> None:
    sink, port = smtp
    config = tmp_path / "cowbird.toml"
    config.write_text(f'[smtp]\nhost = "127.0.0.1"\nport = {port}\n\n[[corpora]]\nname = "x"\nmanifest = "m.json"\n'
                      "nodes = {}\n", encoding="utf-8")
    database = Database(sqlite_url(tmp_path / "cowbird-accounts.sqlite3"))
    database.upgrade()
    with database.session() as session:
        Accounts(database).users.register(session, "ada", "ada@uni.example", "Uni", ABSTRACT, PASSWORD)
    database.close()
    result = CliRunner().invoke(main, ["users", "approve", "ada", "--config", str(config)])
    assert result.exit_code == 0 and result.output == "ada: approved\n"
    assert sink.messages[-1]["Subject"] == "Your cowbird account is approved"


async def test_browser_searches_are_remembered(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site
    assert (await client.get("/api/v1/history")).status_code == 401
    assert (await login(client, "boss")).status_code == 303
    for q in ("house", "the", "house"):
        answer = await client.get("/api/v1/query", params={"corpus": "members", "q": q, "ignore_case": 1,
                                                           "filter": "text_genre~news"})
    await client.get("/api/v1/query", params={"corpus": "members", "q": "old", "offset": 1})  # paging: not new
    history = (await client.get("/api/v1/history")).json()["data"]
    assert [h["q"] for h in history] == ["house", "the", "house"]
    assert history[0]["url"] == "/?corpus=members&q=house&syntax=simple&ignore_case=1&filter=text_genre~news"
    assert history[0]["total"] == answer.json()["total"] > 0 and history[0]["filters"] == ["text_genre~news"]
    with accounts.database.session() as session:
        for k in range(105):
            accounts.searches.remember(session, "boss", "members", f"q{k}", "simple", False, [], 0)
    history = (await client.get("/api/v1/history")).json()["data"]
    assert len(history) == 100 and history[0]["q"] == "q104"


# ------------------------------------------------------------------ the header, rights, self-suspension


def header_of(page: httpx.Response) -> str:
    return page.text[page.text.index("<header>"):page.text.index("</header>")]


def logout_form_of(page: httpx.Response) -> str | None:
    """The csrf of the header's Log out form (its button is in the header; the form, hidden, after the footer)."""
    found = re.search(r'<form id="logout" method="post" action="/logout" hidden>\s*'
                      r'<input type="hidden" name="csrf" value="([^"]+)"></form>', page.text)
    return found.group(1) if found else None


def add_user(accounts: Accounts, name: str) -> None:
    with accounts.database.session() as session:
        user, _ = accounts.users.add(session, name, f"{name}@uni.example", "tests")
        accounts.users.set_password(session, user, PASSWORD, "tests")


async def test_the_header_shows_who_is_logged_in(site: tuple[httpx.AsyncClient, Accounts],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    client, accounts = site
    add_user(accounts, "ada")
    html = {"Accept": "text/html"}
    for path in ("/", "/ref/members/3", "/login"):  # /ref of a login-only corpus: the 404 page, with its header
        header = header_of(await client.get(path, headers=html))
        assert '<a href="/login">Log in</a>' in header and '<a href="/register">Register</a>' in header, path
        assert "Log out" not in header and "ada" not in header
    assert (await login(client, "ada")).status_code == 303
    lookups: list[str] = []
    find = BrowserSessions.find

    def looked_up(self: BrowserSessions, session: Session, secret: str) -> WebSession | None:
        lookups.append(secret)
        return find(self, session, secret)

    monkeypatch.setattr(BrowserSessions, "find", looked_up)
    for path in ("/", "/account", "/ref/members/3"):
        lookups.clear()
        page = await client.get(path, headers=html)
        assert page.status_code == 200, path
        assert len(lookups) == 1, path  # the session is looked up once for the route and the header
        header = header_of(page)
        assert re.search(r'<a href="/account" class="signed-in">.*ada</a>', header), path
        assert '<button type="submit" form="logout" class="logout">Log out</button>' in header
        assert "Log in" not in header and "Register" not in header and "/admin/users" not in header
        assert logout_form_of(page) == csrf_of(await client.get("/account"))  # the session's CSRF token
    # the header's form logs out
    page = await client.get("/ref/members/3", headers=html)
    out = await client.post("/logout", data={"csrf": logout_form_of(page)})
    assert out.status_code == 303 and "cowbird_session" not in client.cookies
    assert "Log in" in header_of(await client.get("/", headers=html))
    # an admin also finds the review page there
    assert (await login(client, "boss")).status_code == 303
    header = header_of(await client.get("/", headers=html))
    assert "boss</a>" in header and '<a href="/admin/users">Admin</a>' in header


async def test_admins_grant_and_revoke_rights(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site
    add_user(accounts, "ada")

    def rights_of(name: str) -> tuple[bool, list[str], list[tuple[str, str, str]]]:
        with accounts.database.session() as session:
            user = accounts.users.get(session, name)
            changes = [(c.what, c.actor, c.reason) for c in accounts.users.changes(session, user) if c.actor == "boss"]
            return user.api_bulk, user.group_names, changes

    # a user who is not an admin may not, even with their own valid CSRF token
    assert (await login(client, "ada")).status_code == 303
    mine = csrf_of(await client.get("/account"))
    refused = await client.post("/admin/users/rights", data={"name": "ada", "change": "grant", "right": "api_bulk",
                                                             "csrf": mine})
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert (await client.get("/admin/users")).status_code == 403
    assert rights_of("ada") == (False, [], [])

    client.cookies.clear()
    assert (await login(client, "boss")).status_code == 303
    review = await client.get("/admin/users")
    csrf = csrf_of(review)
    forged = await client.post("/admin/users/rights", data={"name": "ada", "change": "grant", "right": "api_bulk",
                                                            "csrf": "made-up"})
    assert forged.status_code == 403 and forged.json()["code"] == "csrf_failed"
    assert rights_of("ada") == (False, [], [])

    granted = await client.post("/admin/users/rights", data={"name": "ada", "change": "grant", "right": "api_bulk",
                                                             "reason": "a large export", "csrf": csrf})
    assert granted.status_code == 303 and granted.headers["location"] == "/admin/users"
    assert "ada has api_bulk." in (await client.get("/admin/users")).text
    joined = await client.post("/admin/users/rights", data={"name": "ada", "change": "grant", "right": "group",
                                                            "group": "lab", "csrf": csrf})
    assert joined.status_code == 303 and "ada has group:lab." in (await client.get("/admin/users")).text
    assert rights_of("ada") == (True, ["lab"], [("+api_bulk", "boss", "a large export"), ("+group:lab", "boss", "")])
    page = (await client.get("/admin/users")).text
    row = page[page.index('<tr data-user="ada">'):]
    row = row[:row.index("</tr>")]
    assert "<code>api_bulk</code>" in row and "<code>group:lab</code>" in row
    assert 'name="right" value="group:lab"' in row and 'name="change" value="revoke"' in row

    # mistakes are told on the page, and change nothing
    for data, status, told in (
        ({"right": "group", "group": "la b"}, 400, "group name &#39;la b&#39;: 1-64 letters"),
        ({"right": "group", "group": ""}, 400, "group name &#39;&#39;"),
        ({"right": "api_bulk", "group": "lab"}, 400, "group: choose the right &#39;group&#39;"),
        ({"right": "api_bulk"}, 409, "ada already has api_bulk"),
        ({"right": "everything"}, 400, "&#39;everything&#39; is not a right"),
    ):
        wrong = await client.post("/admin/users/rights", data={"name": "ada", "change": "grant", "csrf": csrf, **data})
        assert wrong.status_code == status and f'<p class="error" role="alert">{told}' in wrong.text, data
    nobody = await client.post("/admin/users/rights", data={"name": "nobody", "change": "grant",
                                                            "right": "api_bulk", "csrf": csrf})
    assert nobody.status_code == 404 and "no user &#39;nobody&#39;" in nobody.text

    for right in ("api_bulk", "group:lab"):
        asked = await client.post("/admin/users/rights", data={"name": "ada", "change": "revoke", "right": right,
                                                               "csrf": csrf})
        assert asked.status_code == 200 and f"You are about to take {right} from ada" in asked.text  # asked first
        revoked = await client.post("/admin/users/rights", data={"name": "ada", "change": "revoke", "right": right,
                                                                 "csrf": csrf, "confirm": "1"})
        assert revoked.status_code == 303, right
        assert f"ada no longer has {right}." in (await client.get("/admin/users")).text
    bulk, groups, changes = rights_of("ada")
    assert (bulk, groups) == (False, []) and changes[2:] == [("-api_bulk", "boss", ""), ("-group:lab", "boss", "")]
    again = await client.post("/admin/users/rights", data={"name": "ada", "change": "revoke", "right": "group:lab",
                                                           "csrf": csrf})
    assert again.status_code == 409 and "ada does not have group:lab" in again.text


async def test_admins_are_warned_before_suspending_themselves(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site

    def state_of(name: str) -> str:
        with accounts.database.session() as session:
            return accounts.users.get(session, name).state

    assert (await login(client, "boss")).status_code == 303
    csrf = csrf_of(await client.get("/admin/users"))
    warned = await client.post("/admin/users/decide", data={"name": "boss", "decision": "suspended",
                                                            "reason": "leaving", "csrf": csrf})
    assert warned.status_code == 200 and "You are about to suspend your own account" in warned.text
    assert "ends all your sessions" in warned.text and "No other approved administrator" in warned.text
    main = warned.text[warned.text.index("<main>"):]
    for field in ('name="name" value="boss"', 'name="decision" value="suspended"', 'name="confirm" value="1"',
                  'name="reason" value="leaving"', f'name="csrf" value="{csrf}"'):
        assert field in main, field
    assert state_of("boss") == "approved" and (await client.get("/admin/users")).status_code == 200

    confirmed = await client.post("/admin/users/decide", data={"name": "boss", "decision": "suspended",
                                                               "reason": "leaving", "confirm": "1", "csrf": csrf})
    assert confirmed.status_code == 200 and "You suspended your own account" in confirmed.text
    assert "Log in" in header_of(confirmed) and "cowbird_session" not in client.cookies
    assert state_of("boss") == "suspended"
    assert (await client.get("/admin/users")).status_code == 303  # to the login form


async def test_admins_are_warned_before_giving_up_their_admin_right(site: tuple[httpx.AsyncClient, Accounts]
                                                                    ) -> None:
    client, accounts = site
    add_user(accounts, "ada")
    with accounts.database.session() as session:
        accounts.users.grant(session, accounts.users.get(session, "ada"), "admin", "tests")
    assert (await login(client, "boss")).status_code == 303
    csrf = csrf_of(await client.get("/admin/users"))
    data = {"name": "boss", "change": "revoke", "right": "admin", "csrf": csrf}
    warned = await client.post("/admin/users/rights", data=data)
    assert warned.status_code == 200 and "take away your own admin right" in warned.text
    assert "No other approved administrator" not in warned.text  # ada is one
    assert (await client.get("/admin/users")).status_code == 200
    done = await client.post("/admin/users/rights", data={**data, "confirm": "1"})
    assert done.status_code == 303 and done.headers["location"] == "/account"
    assert (await client.get("/admin/users")).status_code == 403
    assert "/admin/users" not in header_of(await client.get("/account"))
    # an admin's change to another admin needs no warning
    client.cookies.clear()
    assert (await login(client, "ada")).status_code == 303
    other = await client.post("/admin/users/rights", data={"name": "boss", "change": "grant", "right": "admin",
                                                           "csrf": csrf_of(await client.get("/admin/users"))})
    assert other.status_code == 303 and "boss has admin." in (await client.get("/admin/users")).text


# ------------------------------------------------------------------ throttling, registration, tokens


def from_address(client: httpx.AsyncClient, host: str) -> httpx.AsyncClient:
    """Another browser on the same site, at the client address ``host``."""
    transport = client._transport
    assert isinstance(transport, httpx.ASGITransport)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=transport.app, client=(host, 40_000)),
                             base_url="http://front")


def main_of(page: httpx.Response) -> str:
    return page.text[page.text.index("<main>"):page.text.index("</main>")]


async def test_every_spelling_of_a_login_counts_against_its_account(site: tuple[httpx.AsyncClient, Accounts]
                                                                    ) -> None:
    client, accounts = site
    add_user(accounts, "carol")
    answers = [await login(client, "carol", "wrong password!") for _ in range(5)]
    assert [a.status_code for a in answers] == [400] * 5
    spellings = ["  carol", "carol ", "\u3000carol", "ｃａｒｏｌ", "carol@uni.example", "CAROL@Uni.Example ",
                 "ｃａｒｏｌ＠ｕｎｉ.ｅｘａｍｐｌｅ"]
    for spelling in spellings:
        for password in ("wrong password!", PASSWORD):  # the right password waits too
            answer = await login(client, spelling, password)
            assert answer.status_code == 429 and int(answer.headers["retry-after"]) > 0, (spelling, password)
    assert "cowbird_session" not in client.cookies
    # the same text is throttled alike whether or not it names an account: "Carol" is nobody's name
    assert (await login(client, "Carol", PASSWORD)).status_code == 429
    for _ in range(5):
        await login(client, "Nobody", "wrong password!")
    assert (await login(client, " nobody", "wrong password!")).status_code == 429
    # another account from the same address is not held up (10 failures of the 20 per address)
    assert (await login(client, "boss")).status_code == 303


@pytest.mark.slow
async def test_an_account_has_a_limit_over_all_addresses(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    """40 addresses guessing twice each at one account (the name and the e-mail address) meet the
    account's limit after 20; a known and an unknown name alike; other accounts go on working."""
    client, accounts = site
    add_user(accounts, "carol")
    for target, spellings in (("carol", ("carol", "Carol@uni.example")), ("nobody", ("nobody", "NOBODY "))):
        statuses = []
        for k in range(40):
            async with from_address(client, f"10.0.{len(target)}.{k}") as guesser:
                statuses += [(await login(guesser, spelling, "wrong password!")).status_code for spelling in spellings]
        assert statuses == [400] * 20 + [429] * 60, target
    async with from_address(client, "192.0.2.1") as owner:
        late = await login(owner, "carol")  # the right password, from an address that never failed
        assert late.status_code == 429 and int(late.headers["retry-after"]) > 0
        assert (await login(owner, "boss")).status_code == 303


@pytest.mark.slow  # 1.6 s here (make quick leaves it out)
async def test_an_address_has_a_limit_over_all_accounts(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, _ = site
    statuses = [(await login(client, f"user{k}", "wrong password!")).status_code for k in range(21)]
    assert statuses == [400] * 20 + [429]
    assert (await login(client, "boss")).status_code == 429
    async with from_address(client, "192.0.2.2") as other:
        assert (await login(other, "boss")).status_code == 303


async def register(client: httpx.AsyncClient, name: str, email: str) -> httpx.Response:
    form = await client.get("/register")
    return await client.post("/register", data={"name": name, "email": email, "affiliation": "Uni",
                                                "abstract": ABSTRACT, "password": PASSWORD, "csrf": csrf_of(form)})


async def test_registration_does_not_tell_what_is_taken(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site

    def users_and_history() -> list[tuple[str, str, list[str]]]:
        with accounts.database.session() as session:
            return [(u.name, u.email, [c.what for c in accounts.users.changes(session, u)])
                    for u in accounts.users.all(session)]

    made = await register(client, "ada", "ada@uni.example")
    assert made.status_code == 200 and "waiting for review" in made.text
    before = users_and_history()
    for name, address in (("ada", "someone@else.example"), ("ADA", "someone@else.example"),
                          ("Boss", "new@uni.example"), ("newcomer", "Ada@UNI.example"),
                          ("newcomer", "ａｄａ@uni.example")):
        taken = await register(client, name, address)
        assert (taken.status_code, main_of(taken)) == (made.status_code, main_of(made)), (name, address)
    assert users_and_history() == before  # nothing made, and the owners' records untouched
    # what is wrong with the form itself is still said
    bad = await register(client, "a b", "someone@else.example")
    assert bad.status_code == 400 and "name: 2-64 letters" in bad.text


async def test_registrations_are_throttled_per_address(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site
    statuses = [(await register(client, f"student{k}", f"student{k}@uni.example")).status_code for k in range(11)]
    assert statuses == [200] * 10 + [429]
    refused = await register(client, "student11", "student11@uni.example")
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 3000
    async with from_address(client, "192.0.2.3") as other:
        assert (await register(other, "student12", "student12@uni.example")).status_code == 200
    with accounts.database.session() as session:
        assert len(accounts.users.all(session, State.PENDING)) == 11


async def test_api_tokens_outlive_a_new_password_until_revoked(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site
    add_user(accounts, "ada")
    assert (await login(client, "ada")).status_code == 303
    page = await client.get("/account")
    secrets = []
    for name in ("laptop", "server"):
        made = await client.post("/account/tokens", data={"name": name, "csrf": csrf_of(page)})
        found = re.search(r'<pre class="token">([^<]+)</pre>', made.text)
        assert found is not None
        secrets.append(found.group(1))
    changed = await client.post("/account/password", data={"current": PASSWORD, "new": "another long secret",
                                                           "csrf": csrf_of(page)})
    assert changed.status_code == 200 and "every browser session has ended" in changed.text
    assert "Your API tokens were not revoked: they keep working" in changed.text
    assert (await client.get("/account")).status_code == 303  # logged out
    for secret in secrets:
        answer = await client.get("/api/v1/corpora", headers={"Authorization": f"Bearer {secret}"})
        assert answer.status_code == 200
    assert (await login(client, "ada", "another long secret")).status_code == 303
    page = await client.get("/account")
    assert (await client.post("/account/tokens/revoke-all", data={"csrf": "made-up"})).status_code == 403
    asked = await client.post("/account/tokens/revoke-all", data={"csrf": csrf_of(page)})
    assert asked.status_code == 200 and "Every API token of yours stops working at once" in asked.text
    for secret in secrets:  # asked, not done
        assert (await client.get("/api/v1/corpora", headers={"Authorization": f"Bearer {secret}"})).status_code == 200
    revoked = await client.post("/account/tokens/revoke-all", data={"csrf": csrf_of(page), "confirm": "1"})
    assert revoked.status_code == 200 and "2 API tokens revoked" in revoked.text
    for secret in secrets:
        answer = await client.get("/api/v1/corpora", headers={"Authorization": f"Bearer {secret}"})
        assert answer.status_code == 401
    with accounts.database.session() as session:
        assert accounts.users.changes(session, accounts.users.get(session, "ada"))[-1].what == "every token revoked (2)"


def session_csrf(page: httpx.Response) -> str:
    """The browser session's CSRF token, as every page of a logged-in user holds it (the Log out form)."""
    found = re.search(r'<form id="logout"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"', page.text)
    assert found, page.text
    return found.group(1)


async def test_searches_are_saved_listed_shared_and_deleted(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site
    url = "/?corpus=members&q=house&syntax=simple&filter=text_genre~news&view=frequency&freq_by=lemma"
    assert (await client.post("/api/v1/saved", json={"name": "houses", "url": url})).status_code == 401
    assert (await login(client, "boss")).status_code == 303
    csrf = session_csrf(await client.get("/"))
    refused = await client.post("/api/v1/saved", json={"name": "houses", "url": url})
    assert refused.status_code == 403 and "x-csrf-token" in refused.text  # a browser session's change needs it
    saved = await client.post("/api/v1/saved", json={"name": "  houses  in news ", "url": url},
                              headers={"X-CSRF-Token": csrf})
    assert saved.status_code == 200, saved.text
    body = saved.json()
    assert body["name"] == "houses in news" and body["corpus"] == "members" and body["url"] == url
    assert body["link"].startswith("/s/") and len(body["link"]) > 10
    listed = (await client.get("/api/v1/saved")).json()["data"]
    assert [s["name"] for s in listed] == ["houses in news"]
    # the share link answers with the search page (which runs it for whoever may read the corpus)
    shared = await client.get(body["link"], follow_redirects=False)
    assert shared.status_code == 303 and shared.headers["location"] == url
    client.cookies.clear()
    anonymous = await client.get(body["link"], follow_redirects=True)  # the corpus needs a login: said
    assert anonymous.status_code == 200 and "No corpus is open to you" in anonymous.text
    assert (await client.get("/api/v1/query", params={"corpus": "members", "q": "house"})).status_code in (401, 404)
    assert (await client.get("/s/no-such-link")).status_code == 404
    # what cannot be saved, said
    assert (await login(client, "boss")).status_code == 303
    csrf = session_csrf(await client.get("/"))
    for wrong, said in (("https://elsewhere.example/?corpus=members&q=x", "not a search page of this site"),
                        ("/?corpus=members", "names its corpus and its query"),
                        ("/?corpus=nowhere&q=house", "nowhere")):
        answer = await client.post("/api/v1/saved", json={"name": "x", "url": wrong}, headers={"X-CSRF-Token": csrf})
        assert answer.status_code in (400, 404) and said in answer.text, answer.text
    slug = body["link"].removeprefix("/s/")
    assert (await client.delete(f"/api/v1/saved/{slug}")).status_code == 403  # no CSRF token
    deleted = await client.delete(f"/api/v1/saved/{slug}", headers={"X-CSRF-Token": csrf})
    assert deleted.status_code == 200 and deleted.json()["data"] == []
    assert (await client.get("/api/v1/saved")).json()["data"] == []
    assert (await client.get(body["link"])).status_code == 404


async def test_the_lines_of_a_saved_search_are_categorised_counted_and_exported(
    site: tuple[httpx.AsyncClient, Accounts],
) -> None:
    client, _ = site
    assert (await login(client, "boss")).status_code == 303
    csrf = {"X-CSRF-Token": session_csrf(await client.get("/"))}
    saved = (await client.post("/api/v1/saved", json={"name": "house", "url": "/?corpus=members&q=house"},
                               headers=csrf)).json()
    slug = saved["link"].removeprefix("/s/")
    hits = (await client.get("/api/v1/query", params={"corpus": "members", "q": "house"})).json()["hits"]
    assert len(hits) == 3
    path = f"/api/v1/saved/{slug}/categories"
    for hit, category in zip(hits, (2, 1, 2), strict=True):
        answer = await client.post(path, json={"position": hit["position"], "matchend": hit["matchend"],
                                               "category": category}, headers=csrf)
        assert answer.status_code == 200, answer.text
    assert (await client.post(path, json={"position": 1, "matchend": 1, "category": 4})).status_code == 403  # CSRF
    named = await client.post(f"/api/v1/saved/{slug}/labels", json={"labels": ["literal", "figurative"]},
                              headers=csrf)
    assert named.json()["labels"][:3] == ["literal", "figurative", ""]
    body = (await client.get(path)).json()
    assert body["counts"] == [1, 2, 0, 0, 0, 0, 0, 0, 0] and body["name"] == "house"
    assert [(x["position"], x["category"]) for x in body["lines"]] == [(h["position"], c) for h, c in
                                                                     zip(hits, (2, 1, 2), strict=True)]
    taken = await client.post(path, json={"position": hits[2]["position"], "matchend": hits[2]["matchend"],
                                          "category": 0}, headers=csrf)
    assert taken.json()["counts"][:2] == [1, 1]
    # the concordance export adds them as two columns, reloaded by the hits' positions
    export = await client.get("/api/v1/export", params={"corpus": "members", "q": "house", "categories": slug})
    assert export.status_code == 200, export.text
    rows = [line.split("\t") for line in export.text.splitlines()]
    assert rows[0][-2:] == ["category", "category_label"]
    assert [row[-2:] for row in rows[1:]] == [["2", "figurative"], ["1", "literal"], ["", ""]]
    # in the page's order; and the categorised lines only, all of them, in that order
    order = {"sort": "right1.word", "direction": "desc"}
    page = (await client.get("/api/v1/query", params={"corpus": "members", "q": "house", **order})).json()["hits"]
    sorted_export = await client.get("/api/v1/export", params={"corpus": "members", "q": "house", "categories": slug,
                                                               **order})
    by_position = {h["position"]: c for h, c in zip(hits, (["2", "figurative"], ["1", "literal"], ["", ""]),
                                                    strict=True)}
    assert [[int(r[1]), r[-2:]] for r in (line.split("\t") for line in sorted_export.text.splitlines()[1:])] == [
        [h["position"], by_position[h["position"]]] for h in page]
    only = await client.get("/api/v1/export", params={"corpus": "members", "q": "house", "categories": slug,
                                                      "only_categorised": 1, "provenance": 1, **order})
    assert only.status_code == 200, only.text
    assert only.headers["x-cowbird-rows"] == "2" and only.headers["x-cowbird-truncated"] == "false"
    assert "_categorised2of3." in only.headers["content-disposition"] and "_partial" not in only.headers[
        "content-disposition"]
    data = [line.split("\t") for line in only.text.splitlines() if not line.startswith("#")][1:]
    assert [int(r[1]) for r in data] == [h["position"] for h in page if by_position[h["position"]] != ["", ""]]
    assert '# selection: "the 2 categorised lines of the 3 hits, sorted by right1.word desc"' in only.text
    for wrong, said in (({"only_categorised": 1}, "needs categories="),
                        ({"only_categorised": 1, "categories": slug, "limit": 5},
                         "leave out sample, offset and limit")):
        refused = await client.get("/api/v1/export", params={"corpus": "members", "q": "house", **wrong})
        assert refused.status_code == 400 and said in refused.json()["detail"], refused.text
    # another user has no such saved search
    client.cookies.clear()
    assert (await client.get(path)).status_code == 401
    anonymous_export = await client.get("/api/v1/export", params={"corpus": "members", "q": "house",
                                                                  "categories": slug})
    assert anonymous_export.status_code in (401, 404)


async def test_login_lands_on_the_search_or_on_the_page_asked_for(site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, _ = site
    asked = await client.get("/account")
    assert asked.status_code == 303 and asked.headers["location"] == "/login?next=/account"
    form = await client.get("/login?next=/%3Fcorpus%3Dmembers%26q%3Dhouse")
    assert '<input type="hidden" name="next" value="/?corpus=members&amp;q=house">' in form.text
    fields = {"login": "boss", "password": PASSWORD, "csrf": csrf_of(form)}
    back = await client.post("/login", data={**fields, "next": "/?corpus=members&q=house"})
    assert back.status_code == 303 and back.headers["location"] == "/?corpus=members&q=house"
    for elsewhere in ("//evil.example/x", "/\\evil.example", "https://evil.example/", "javascript:alert(1)",
                      "/login?next=/account", "/a\nSet-Cookie: x=1"):
        client.cookies.clear()
        form = await client.get("/login")
        off = await client.post("/login", data={**fields, "csrf": csrf_of(form), "next": elsewhere})
        assert off.status_code == 303 and off.headers["location"] == "/", elsewhere  # the search instead


async def test_admin_leads_to_the_review_of_accounts_for_administrators_only(
        site: tuple[httpx.AsyncClient, Accounts]) -> None:
    client, accounts = site
    anonymous = await client.get("/admin")
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/login?next=/admin"
    with accounts.database.session() as session:
        user, _ = accounts.users.add(session, "ada", "ada@uni.example", "tests")
        accounts.users.set_password(session, user, PASSWORD, "tests")
    await login(client, "ada")
    refused = await client.get("/admin")
    assert refused.status_code == 403 and "this page is for administrators" in refused.text
    client.cookies.clear()
    await login(client, "boss")
    admin = await client.get("/admin")
    assert admin.status_code == 303 and admin.headers["location"] == "/admin/users"
    assert "ada" in (await client.get(admin.headers["location"])).text
