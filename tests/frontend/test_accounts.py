"""Accounts on a real database (an SQLite file, and a real PostgreSQL server): the lifecycle with
its record, tokens, the command line, and who sees which corpus through the API."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from fastapi import FastAPI
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule
from sqlalchemy import func, select, text

from cowbird.commands.cli import main
from cowbird.core.errors import BadParameter, NotFound
from cowbird.frontend import CorpusConfig, FrontendSettings
from cowbird.frontend.accounts import Accounts, Conflict, Database, NotAllowed, State, sqlite_url
from cowbird.frontend.accounts.models import LineCategory
from cowbird.frontend.accounts.passwords import verify_password
from cowbird.frontend.accounts.service import TRANSITIONS
from cowbird.frontend.corpora import CorpusEntry
from cowbird.frontend.credentials import viewer_of
from cowbird.frontend.settings import Access, AccessLevel, AccountSettings, NodeAccess
from cowbird.frontend.viewer import ANONYMOUS
from tests.accounts_support import postgres_server
from tests.frontend.conftest import NODE_TOKEN, Partitioned, front_client
from tests.support import Params

pytestmark = pytest.mark.anyio

ABSTRACT = "I study how speakers of English use light verb constructions in informal web writing. " * 3
PASSWORD = "correct horse battery"


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        db = Database(sqlite_url(tmp_path / "accounts.sqlite3"))
    else:
        db = Database(request.getfixturevalue("postgres_url"))
        with db.engine.begin() as connection:  # a fresh schema for each test
            connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    db.upgrade()
    yield db
    db.close()


@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
def test_migrations_run_once_and_keep_data(database: Database, tmp_path: Path) -> None:
    accounts = Accounts(database)
    with database.session() as session:
        accounts.users.add(session, "root", "root@example.org", "tests", admin=True)
    head = database.head()
    assert database.upgrade() == (head, head) and database.current() == head == "0007"
    with database.session() as session:
        assert [u.name for u in accounts.users.all(session)] == ["root"]
    # a database made by the first release keeps its users through the upgrade
    old = Database(sqlite_url(tmp_path / "old.sqlite3"))
    assert old.upgrade("0001") == (None, "0001")
    with old.session() as session:
        Accounts(old).users.add(session, "early", "early@example.org", "tests")
    assert old.upgrade() == ("0001", "0007")
    with old.session() as session:
        assert [u.name for u in Accounts(old).users.all(session)] == ["early"]
        assert Accounts(old).secrets.get(session, "session-key") == Accounts(old).secrets.get(session, "session-key")
    old.close()


@pytest.mark.slow  # 1.4 s here (make quick leaves it out)
def test_the_account_lifecycle_is_recorded(database: Database) -> None:
    accounts = Accounts(database)
    with database.session() as session:
        user = accounts.users.register(session, "ada", "Ada@Uni.example", "Uni Example", ABSTRACT, PASSWORD)
        assert user.state == "pending" and not user.active
        assert verify_password(user.password_hash, PASSWORD) and not verify_password(user.password_hash, "wrong one!")
        with pytest.raises(Conflict):
            accounts.users.register(session, "ada2", "ada@uni.EXAMPLE", "Uni", ABSTRACT, PASSWORD)  # e-mail, any case
        with pytest.raises(BadParameter, match="reason"):
            accounts.users.decide(session, user, State.DENIED, "admin", " ")
        accounts.users.decide(session, user, State.APPROVED, "admin", "")
        with pytest.raises(NotAllowed, match="already approved"):
            accounts.users.decide(session, user, State.APPROVED, "admin", "")
        accounts.users.decide(session, user, State.SUSPENDED, "admin", "shared the password")
        with pytest.raises(NotAllowed, match="cannot become denied"):
            accounts.users.decide(session, user, State.DENIED, "admin", "no")
        accounts.users.decide(session, user, State.APPROVED, "admin", "reinstated")
        accounts.users.grant(session, user, "group:lab", "admin")
        accounts.users.grant(session, user, "api_bulk", "admin", "large exports for the project")
        history = [(c.what, c.actor, c.reason) for c in accounts.users.changes(session, user)]
    assert history == [
        ("registered (pending)", "ada", ""),
        ("state: pending -> approved", "admin", ""),
        ("state: approved -> suspended", "admin", "shared the password"),
        ("state: suspended -> approved", "admin", "reinstated"),
        ("+group:lab", "admin", ""),
        ("+api_bulk", "admin", "large exports for the project"),
    ]


@pytest.mark.parametrize(
    ("field", "values"),
    [("name", {"name": "a b"}), ("email", {"email": "not-an-address"}), ("abstract", {"abstract": "too short"}),
     ("affiliation", {"affiliation": " "}), ("password", {"password": "short"})],
)  # fmt: skip
def test_registration_names_what_is_wrong(database: Database, field: str, values: dict[str, str]) -> None:
    given = {"name": "ada", "email": "ada@uni.example", "affiliation": "Uni", "abstract": ABSTRACT,
             "password": PASSWORD} | values  # fmt: skip
    with database.session() as session, pytest.raises(BadParameter, match=f"^{field}:"):
        Accounts(database).users.register(session, **given)


def test_a_huge_password_is_refused_before_hashing(database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    from cowbird.frontend.accounts import passwords

    class NoHashing:
        def hash(self, password: str) -> str:
            raise AssertionError(f"a {len(password):,}-character password was hashed")

        verify = hash

    monkeypatch.setattr(passwords, "_HASHER", NoHashing())
    with database.session() as session, pytest.raises(BadParameter, match="at most 1024 bytes"):
        Accounts(database).users.register(session, "ada", "ada@uni.example", "Uni", ABSTRACT, "x" * 1_000_000)
    assert not verify_password(None, "x" * 1_000_000)


def test_tokens_are_hashed_shown_once_and_revoked_at_once(database: Database) -> None:
    accounts = Accounts(database)
    with database.session() as session:
        user, _ = accounts.users.add(session, "ada", "ada@uni.example", "tests")
        token = accounts.tokens.create(session, user, "laptop")
        assert token.secret.startswith("cb_") and len(token.secret) > 40
        stored = accounts.tokens.of(session, user)[0]
        assert stored.digest != token.secret and token.secret not in (stored.digest, stored.prefix)
        assert accounts.tokens.user_for(session, token.secret) is user
        with pytest.raises(Conflict):
            accounts.tokens.create(session, user, "laptop")
    with database.session() as session:
        accounts.tokens.revoke(session, accounts.users.get(session, "ada"), "laptop")
    with database.session() as session:
        assert accounts.tokens.user_for(session, token.secret) is None


def test_the_command_line(tmp_path: Path) -> None:
    config = tmp_path / "cowbird.toml"
    config.write_text('[[corpora]]\nname = "x"\nmanifest = "m.json"\nnodes = {}\n', encoding="utf-8")
    run = CliRunner().invoke
    upgrade = run(main, ["db", "upgrade", "--config", str(config)])
    assert upgrade.exit_code == 0 and upgrade.output == "account database at revision 0007 (was None)\n"
    assert (tmp_path / "cowbird-accounts.sqlite3").is_file()  # next to the configuration
    added = run(main, ["users", "add", "root", "--email", "root@example.org", "--admin", "--config", str(config)])
    assert added.exit_code == 0 and "one-time password: " in added.output
    tokens = tmp_path / "api.tokens"
    tokens.write_text("# old file\nold-token-0123456789\n\n", encoding="utf-8")
    imported = run(main, ["users", "import-tokens", str(tokens), "--user", "root", "--config", str(config)])
    assert imported.exit_code == 0 and imported.output.startswith("1 of 1 tokens imported for root")
    again = run(main, ["users", "import-tokens", str(tokens), "--user", "root", "--config", str(config)])
    assert again.output.startswith("0 of 1 tokens imported")
    refused = run(main, ["users", "deny", "root", "--config", str(config)])
    assert refused.exit_code == 2 and "--reason" in refused.output
    suspended = run(main, ["users", "suspend", "root", "--reason", "holiday", "--config", str(config)])
    assert suspended.exit_code == 0
    listing = run(main, ["users", "list", "--config", str(config)]).output.split("\t")
    assert listing[:4] == ["root", "root@example.org", "suspended", "admin,api_bulk"]
    shown = run(main, ["users", "show", "root", "--config", str(config)]).output
    assert "token imported-1 (old-t...) active" in shown and "state: approved -> suspended — holiday" in shown
    missing = run(main, ["users", "approve", "nobody", "--config", str(config)])
    assert missing.exit_code == 1 and "no user 'nobody'" in missing.output
    # a token shorter than 20 characters is refused, and then nothing is imported
    short = tmp_path / "short.tokens"
    short.write_text("# old file\nanother-token-0123456789\nx\n\nabc123\n", encoding="utf-8")
    refused = run(main, ["users", "import-tokens", str(short), "--user", "root", "--config", str(config)])
    assert refused.exit_code == 1 and "the tokens on lines 3, 5 are shorter than 20 characters" in refused.output
    assert "nothing was imported" in refused.output
    assert "imported-2" not in run(main, ["users", "show", "root", "--config", str(config)]).output
    short.write_text("old-token-0123456789\nanother-token-0123456789\n", encoding="utf-8")
    second = run(main, ["users", "import-tokens", str(short), "--user", "root", "--config", str(config)])
    assert second.exit_code == 0 and second.output.startswith("1 of 2 tokens imported")  # named imported-2
    # a new password leaves the API tokens working, and says so; revoke-tokens ends them all
    assert run(main, ["users", "reinstate", "root", "--config", str(config)]).exit_code == 0
    reset = run(main, ["users", "reset-password", "root", "--config", str(config)])
    assert reset.exit_code == 0 and "root's 2 API token(s) keep working" in reset.output
    ended = run(main, ["users", "revoke-tokens", "root", "--config", str(config)])
    assert ended.exit_code == 0 and ended.output == "root: 2 API token(s) revoked\n"
    shown = run(main, ["users", "show", "root", "--config", str(config)]).output
    assert "token imported-1 (old-t...) revoked" in shown and "token imported-2 (anothe...) revoked" in shown
    assert "every token revoked (2)" in shown


def test_look_alike_names_and_addresses_are_refused(database: Database) -> None:
    accounts = Accounts(database)
    with database.session() as session:
        accounts.users.add(session, "admin", "admin@uni.example", "tests", admin=True)
        accounts.users.register(session, "alice", "alice@uni.example", "Uni", ABSTRACT, PASSWORD)
        for name, told in (("admin", "name: 'admin' exists"),
                           ("ADMIN", "name: 'ADMIN' is too like the existing name 'admin'"),
                           ("Alice", "name: 'Alice' is too like the existing name 'alice'")):
            with pytest.raises(Conflict, match=f"^{told}$"):
                accounts.users.register(session, name, "new@uni.example", "Uni", ABSTRACT, PASSWORD)
            with pytest.raises(Conflict, match=f"^{told}$"):
                accounts.users.add(session, name, "new@uni.example", "tests")
        for email in ("ALICE@uni.example", " alice@UNI.EXAMPLE ", "ａｌｉｃｅ@uni.example"):
            with pytest.raises(Conflict, match="^email: .* is already registered$"):
                accounts.users.register(session, "alice2", email, "Uni", ABSTRACT, PASSWORD)
        assert [u.name for u in accounts.users.all(session)] == ["admin", "alice"]


def test_a_login_is_looked_up_as_typed_in_any_width(database: Database) -> None:
    accounts = Accounts(database)
    with database.session() as session:
        carol, _ = accounts.users.add(session, "carol", "carol@uni.example", "tests")
        for login in ("carol", "  carol ", "\u3000carol", "ｃａｒｏｌ", "Carol@Uni.Example",
                      "ｃａｒｏｌ＠ｕｎｉ.ｅｘａｍｐｌｅ"):
            assert accounts.users.find(session, login) is carol, login
        assert accounts.users.find(session, "Carol") is None  # a name is written as it was registered
        # an address stored before its key had NFKC in it is still found as it was typed then, in any case
        old, _ = accounts.users.add(session, "wide", "ｗｉｄｅ@uni.example", "tests")
        old.email_key = "ｗｉｄｅ@uni.example"
        session.flush()
        assert accounts.users.find(session, "ＷＩＤＥ@UNI.example") is old


def test_api_tokens_survive_a_new_password_and_are_revoked_together(database: Database) -> None:
    accounts = Accounts(database)
    with database.session() as session:
        user, _ = accounts.users.add(session, "ada", "ada@uni.example", "tests")
        first, second = (accounts.tokens.create(session, user, name).secret for name in ("laptop", "server"))
        accounts.tokens.revoke(session, user, "server")
        accounts.users.set_password(session, user, "a new long password", "ada")
        assert accounts.tokens.user_for(session, first) is user
        assert accounts.tokens.revoke_all(session, user, "ada") == 1
        assert accounts.tokens.user_for(session, first) is None and accounts.tokens.user_for(session, second) is None
        assert accounts.tokens.revoke_all(session, user, "ada") == 0
        assert [c.what for c in accounts.users.changes(session, user)][-1] == "every token revoked (1)"


def test_short_tokens_are_not_imported(database: Database) -> None:
    accounts = Accounts(database)
    with database.session() as session:
        user, _ = accounts.users.add(session, "ada", "ada@uni.example", "tests")
        with pytest.raises(BadParameter, match="token old: 1 characters; a token has at least 20"):
            accounts.tokens.import_secret(session, user, "old", "x")
        assert accounts.tokens.import_secret(session, user, "old", "y" * 20)


# ------------------------------------------------------------------ who sees what, over HTTP


@pytest.fixture
async def guarded(sample_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path,
                  database: Database) -> AsyncIterator[tuple[httpx.AsyncClient, Accounts, dict[str, str]]]:
    """The sample corpus three times: public, login-only, and for group lab; users in each state."""
    accounts = Accounts(database)
    secrets: dict[str, str] = {}
    with database.session() as session:
        for name, state in (("member", State.APPROVED), ("other", State.APPROVED), ("waiting", State.PENDING),
                            ("away", State.SUSPENDED)):
            user = accounts.users.register(session, name, f"{name}@uni.example", "Uni", ABSTRACT, PASSWORD)
            if state is not State.PENDING:
                accounts.users.decide(session, user, State.APPROVED, "admin", "")
            if state is State.SUSPENDED:
                accounts.users.decide(session, user, State.SUSPENDED, "admin", "holiday")
            secrets[name] = accounts.tokens.create(session, user, "script").secret
        accounts.users.grant(session, accounts.users.get(session, "member"), "group:lab", "admin")
        chief, _ = accounts.users.add(session, "chief", "chief@uni.example", "tests", admin=True)
        secrets["chief"] = accounts.tokens.create(session, chief, "script").secret
    nodes_of = {pid: ["http://node-a" if k < 2 else "http://node-b"] for k, pid in enumerate(sample_parts.ids)}
    corpora = [CorpusConfig(name=name, title=name, manifest=sample_parts.manifest, nodes=nodes_of, access=access)
               for name, access in (("open", Access(AccessLevel.PUBLIC)), ("members", Access(AccessLevel.LOGIN)),
                                    ("lab", Access(AccessLevel.GROUP, "lab")))]
    settings = FrontendSettings(corpora=corpora, nodes=NodeAccess(token=NODE_TOKEN), allowed_hosts=["front"],
                                accounts=AccountSettings(database_url=database.url))
    async for client in front_client(settings, nodes):
        yield client, accounts, secrets


ROUTES = [
    "/api/v1/query?corpus={c}&q=house",
    "/api/v1/export?corpus={c}&q=house",
    "/api/v1/ref/{c}/2",
    "/ref/{c}/2",
]


@pytest.mark.slow  # 3.3 s here (make quick leaves it out)
async def test_each_viewer_sees_exactly_the_corpora_it_may(
    guarded: tuple[httpx.AsyncClient, Accounts, dict[str, str]],
) -> None:
    client, _, secrets = guarded
    expected = {None: {"open"}, "other": {"open", "members"}, "member": {"open", "members", "lab"},
                "chief": {"open", "members", "lab"}}  # an admin sees group corpora too
    for who, visible in expected.items():
        headers = {"Authorization": f"Bearer {secrets[who]}"} if who else {}
        listing = (await client.get("/api/v1/corpora", headers=headers)).json()
        assert {c["name"] for c in listing["data"]} == visible, who
        for corpus in ("open", "members", "lab"):
            for route in ROUTES:
                answer = await client.get(route.format(c=corpus), headers=headers)
                if corpus in visible:
                    assert answer.status_code == 200, (who, route, answer.text)
                elif route.startswith("/api/"):  # invisible, not forbidden: answered as for no such corpus
                    known = ", ".join(sorted(visible))
                    assert answer.status_code == 404, (who, route)
                    assert answer.json()["detail"] == (
                        f"there is no corpus {corpus!r} open to you: it does not exist, or it needs a login or a "
                        f"group's right (available: {known})"), (who, route)
                else:
                    assert answer.status_code == 404, (who, route)


async def test_only_approved_accounts_use_tokens(guarded: tuple[httpx.AsyncClient, Accounts, dict[str, str]]) -> None:
    client, accounts, secrets = guarded
    for who in ("waiting", "away"):
        answer = await client.get("/api/v1/corpora", headers={"Authorization": f"Bearer {secrets[who]}"})
        assert answer.status_code == 401 and "not valid" in answer.json()["detail"], who
    by_query = await client.get("/api/v1/query", params={"corpus": "lab", "q": "house", "token": secrets["member"]})
    assert by_query.status_code == 200 and by_query.json()["total"] == 3
    with accounts.database.session() as session:
        accounts.tokens.revoke(session, accounts.users.get(session, "member"), "script")
    revoked = await client.get("/api/v1/query", params={"corpus": "lab", "q": "house", "token": secrets["member"]})
    assert revoked.status_code == 401  # at once: every request checks the token
    assert (await client.get("/api/v1/corpora", params={"token": "made-up"})).status_code == 401


async def test_large_exports_need_api_bulk(guarded: tuple[httpx.AsyncClient, Accounts, dict[str, str]]) -> None:
    client, accounts, secrets = guarded
    params: Params = {"corpus": "open", "q": "house", "limit": 20_000}
    plain = await client.get("/api/v1/export", params=params, headers={"Authorization": f"Bearer {secrets['other']}"})
    assert plain.status_code == 403 and "api_bulk" in plain.json()["detail"]
    with accounts.database.session() as session:
        accounts.users.grant(session, accounts.users.get(session, "other"), "api_bulk", "admin")
    bulk = await client.get("/api/v1/export", params=params, headers={"Authorization": f"Bearer {secrets['other']}"})
    assert bulk.status_code == 200 and bulk.headers["x-cowbird-rows"] == "3"


# ------------------------------------------------------------------ the lifecycle as a state machine


class Lifecycle(RuleBasedStateMachine):
    """Register, approve, deny, suspend, reinstate and group changes in any order an admin could
    make them; after every step, exactly the approved users' tokens work and each viewer sees
    exactly the corpora its account allows."""

    names = Bundle("names")

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="cowbird-lifecycle-"))
        self.database = Database(sqlite_url(self.folder / "accounts.sqlite3"))
        self.database.upgrade()
        self.accounts = Accounts(self.database)
        self.state: dict[str, State] = {}
        self.groups: dict[str, bool] = {}
        self.tokens: dict[str, str] = {}
        corpora = [CorpusConfig(name=n, manifest=Path("m.json"), nodes={}, access=a) for n, a in
                   (("open", Access(AccessLevel.PUBLIC)), ("members", Access(AccessLevel.LOGIN)),
                    ("lab", Access(AccessLevel.GROUP, "lab")))]
        self.corpora = corpora

    def teardown(self) -> None:
        self.database.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    @rule(target=names, name=st.sampled_from(["ada", "bo", "cy", "di"]))
    def register(self, name: str) -> str:
        with self.database.session() as session:
            if self.accounts.users.find(session, name) is None:
                user = self.accounts.users.register(session, name, f"{name}@uni.example", "Uni", ABSTRACT, PASSWORD)
                self.tokens[name] = self.accounts.tokens.create(session, user, "t").secret
                self.state[name], self.groups[name] = State.PENDING, False
        return name

    @rule(name=names, to=st.sampled_from(list(State)))
    def decide(self, name: str, to: State) -> None:
        allowed = to in TRANSITIONS and self.state[name] in TRANSITIONS[to]
        with self.database.session() as session:
            user = self.accounts.users.get(session, name)
            if allowed:
                self.accounts.users.decide(session, user, to, "admin", "because")
                self.state[name] = to
            else:
                with pytest.raises(NotAllowed):
                    self.accounts.users.decide(session, user, to, "admin", "because")

    @rule(name=names, member=st.booleans())
    def group(self, name: str, member: bool) -> None:
        with self.database.session() as session:
            user = self.accounts.users.get(session, name)
            (self.accounts.users.grant if member else self.accounts.users.revoke)(session, user, "group:lab", "admin")
        self.groups[name] = member

    @invariant()
    def who_sees_what(self) -> None:
        for name, secret in self.tokens.items():
            with self.database.session() as session:
                user = self.accounts.tokens.user_for(session, secret)
                viewer = ANONYMOUS if user is None else viewer_of(user)
            approved = self.state[name] is State.APPROVED
            assert (user is not None) == approved, (name, self.state[name])
            expected = {"open"} | ({"members"} if approved else set()) | ({"lab"} if approved and self.groups[name]
                                                                          else set())
            seen = {c.name for c in self.corpora if _entry(c).visible_to(viewer)}
            assert seen == expected, (name, self.state[name], self.groups[name])


def _entry(config: CorpusConfig) -> CorpusEntry:
    return CorpusEntry(config, None, [])  # type: ignore[arg-type]  # visibility reads only the config


TestLifecycle = pytest.mark.slow(Lifecycle.TestCase)
TestLifecycle.settings = settings(max_examples=30, stateful_step_count=15, deadline=None)


def test_saved_searches_are_kept_by_name_with_a_share_id(database: Database) -> None:
    accounts = Accounts(database)
    with database.session() as session:
        accounts.users.add(session, "ada", "ada@example.org", "tests")
        accounts.users.add(session, "bo", "bo@example.org", "tests")
        first = accounts.saved.save(session, "ada", "modal verbs", "ewt", "/?corpus=ewt&q=%5Bpos%3D%22MD%22%5D")
        slug = first.slug
        accounts.saved.save(session, "ada", "house", "ewt", "/?corpus=ewt&q=house")
        accounts.saved.save(session, "bo", "house", "ewt", "/?corpus=ewt&q=house&view=frequency")
    with database.session() as session:
        again = accounts.saved.save(session, "ada", "modal verbs", "ewt", "/?corpus=ewt&q=must&sort=right1.word")
        assert again.slug == slug  # the same name: replaced, its link kept
        assert [(s.name, s.url) for s in accounts.saved.of(session, "ada")] == [
            ("house", "/?corpus=ewt&q=house"), ("modal verbs", "/?corpus=ewt&q=must&sort=right1.word")]
        found = accounts.saved.find(session, slug)
        assert found is not None and found.name == "modal verbs"
        with pytest.raises(NotFound):
            accounts.saved.delete(session, "bo", slug)  # another user's is not bo's to delete
    with database.session() as session:
        accounts.saved.delete(session, "ada", slug)
    with database.session() as session:
        assert accounts.saved.find(session, slug) is None
        assert [s.name for s in accounts.saved.of(session, "ada")] == ["house"]
        assert [s.url for s in accounts.saved.of(session, "bo")] == ["/?corpus=ewt&q=house&view=frequency"]


def test_line_categories_are_kept_per_saved_search(database: Database) -> None:
    accounts = Accounts(database)
    with database.session() as session:
        accounts.users.add(session, "ada", "ada@example.org", "tests")
        slug = accounts.saved.save(session, "ada", "go to", "ewt", "/?corpus=ewt&q=go").slug
        big = 6_000_000_000  # positions beyond 32 bits: corpora of many GT
        accounts.saved.categorise(session, "ada", slug, big, big + 2, 2)
        accounts.saved.categorise(session, "ada", slug, 17, 17, 1)
        accounts.saved.categorise(session, "ada", slug, 17, 17, 3)  # a line has one category: the last given
        accounts.saved.categorise(session, "ada", slug, 40, 41, 1)
        accounts.saved.categorise(session, "ada", slug, 40, 41, 0)  # 0 takes it away
        assert accounts.saved.name_categories(session, "ada", slug, ["literal", " figurative  use "])[:3] == [
            "literal", "figurative use", ""]
        with pytest.raises(BadParameter):
            accounts.saved.categorise(session, "ada", slug, 1, 1, 10)
    with database.session() as session:
        saved, lines = accounts.saved.categories(session, "ada", slug)
        assert [(x.position, x.matchend, x.category) for x in lines] == [(17, 17, 3), (big, big + 2, 2)]
        assert json.loads(saved.labels)[:2] == ["literal", "figurative use"]
        accounts.saved.delete(session, "ada", slug)
    with database.session() as session:
        assert session.scalar(select(func.count()).select_from(LineCategory)) == 0
