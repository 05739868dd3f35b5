"""Real Chromium (Debian's, at /usr/bin/chromium; Playwright cannot download its own here) against
real node and front-end processes on loopback serving the sample corpus twice: as a public corpus
and as a login-only one, with one approved user."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from cowbird.commands.demo import DemoStack
from cowbird.frontend.accounts import Accounts, Database, sqlite_url
from tests.support import free_ports, unavailable

CHROMIUM = os.environ.get("COWBIRD_CHROMIUM", "/usr/bin/chromium")
USER, PASSWORD = "ada", "correct horse battery"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    front, node1, node2 = free_ports(3)
    stack = DemoStack(tmp_path_factory.mktemp("browser-site"), front, (node1, node2), log_level="warning")
    stack.prepare()
    config = stack.base / "cowbird.toml"
    text = config.read_text(encoding="utf-8")
    members = text[text.index("[[corpora]]"):]
    changes = (('name = "sample"', 'name = "members"'), ('title = "cowbird sample corpus"', 'title = "Members only"'),
               ('access = "public"', 'access = "login"'))
    for old, new in changes:
        members = members.replace(old, new, 1)
    config.write_text(text + "\n" + members, encoding="utf-8")
    database = Database(sqlite_url(stack.base / "cowbird-accounts.sqlite3"))
    database.upgrade()
    accounts = Accounts(database)
    with database.session() as session:
        user, _ = accounts.users.add(session, USER, "ada@uni.example", "tests")
        accounts.users.set_password(session, user, PASSWORD, "tests")
    database.close()
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Module-scoped: sync Playwright runs an event loop of its own while it is open, and the
    asynchronous tests of other modules must not find it running."""
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def browser_page_phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    yield page
    context.close()
