"""The account header and the admin's user page in real Chromium: who is logged in, logging out
from any page, an admin granting and revoking a right, and the warning before suspending oneself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from cowbird.frontend.accounts import Accounts, Database, sqlite_url
from tests.browser.conftest import PASSWORD, USER
from tests.browser.pages import check_accessibility, shoot

pytestmark = pytest.mark.e2e

ADMIN = "grace"


@pytest.fixture(scope="module")
def accounts(site: DemoStack) -> Iterator[Accounts]:
    """The running site's account database, with an administrator of this module's own."""
    database = Database(sqlite_url(site.base / "cowbird-accounts.sqlite3"))
    accounts = Accounts(database)
    with database.session() as session:
        admin, _ = accounts.users.add(session, ADMIN, "grace@uni.example", "tests", admin=True)
        accounts.users.set_password(session, admin, PASSWORD, "tests")
    yield accounts
    database.close()


def log_in(page: Page, site: DemoStack, name: str) -> None:
    page.goto(f"{site.url}/login")
    page.fill('input[name="login"]', name)
    page.fill('input[name="password"]', PASSWORD)
    page.press('input[name="password"]', "Enter")
    expect(page).to_have_url(f"{site.url}/")  # logging in lands on the search


def test_the_header_shows_the_user_and_logs_out(site: DemoStack, accounts: Accounts, page: Page,
                                                tmp_path: Path) -> None:
    page.goto(site.url)
    header = page.locator("header")
    expect(header.get_by_role("link", name="Log in")).to_be_visible()
    log_in(page, site, USER)
    expect(header.get_by_role("link", name=USER)).to_have_attribute("href", "/account")
    expect(header.get_by_role("button", name="Log out")).to_be_visible()
    expect(header.get_by_role("link", name="Log in")).to_have_count(0)
    expect(header.get_by_role("link", name="Admin")).to_have_count(0)  # ada is no administrator
    check_accessibility(page)
    page.goto(f"{site.url}/ref/members/60")  # a login-only corpus's static link: ada sees it, logged in
    expect(page.locator(".sentence mark")).to_have_text("coffee")
    expect(header).to_contain_text(USER)
    shoot(page, "header-logged-in", tmp_path)
    check_accessibility(page)
    page.set_viewport_size({"width": 390, "height": 844})
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390-px screen"
    page.set_viewport_size({"width": 1280, "height": 800})
    header.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{site.url}/")
    expect(header.get_by_role("link", name="Log in")).to_be_visible()
    expect(header.get_by_role("button", name="Log out")).to_have_count(0)
    assert page.locator("#corpus option").all_inner_texts() == ["cowbird sample corpus — 93 tokens"]
    page.goto(f"{site.url}/account")
    expect(page).to_have_url(f"{site.url}/login?next=/account")  # the session is gone on the server too


def test_an_admin_grants_and_revokes_a_right(site: DemoStack, accounts: Accounts, page: Page,
                                             tmp_path: Path) -> None:
    log_in(page, site, ADMIN)
    page.locator("header").get_by_role("link", name="Admin").click()
    expect(page).to_have_url(f"{site.url}/admin/users")
    row = page.locator(f'tr[data-user="{USER}"]')
    expect(row.locator("ul.rights")).to_have_text("none")
    row.get_by_label("Right", exact=True).select_option("group")
    row.get_by_label("Group", exact=True).fill("lab")
    row.get_by_label("Reason", exact=True).fill("joins the lab project")
    row.get_by_role("button", name=f"Grant to {USER}").click()
    expect(page).to_have_url(f"{site.url}/admin/users")
    expect(row.locator("ul.rights code")).to_have_text(["group:lab"])
    expect(page.locator("p.notice")).to_have_text(f"{USER} has group:lab.")  # it says what it did
    shoot(page, "admin-users", tmp_path)
    check_accessibility(page)
    with accounts.database.session() as session:
        user = accounts.users.get(session, USER)
        assert user.group_names == ["lab"]
        assert [(c.what, c.actor, c.reason) for c in accounts.users.changes(session, user)][-1] == (
            "+group:lab", ADMIN, "joins the lab project")
    revoke = row.get_by_role("button", name=f"Revoke group:lab from {USER}")
    assert "danger" in (revoke.get_attribute("class") or "")  # it looks destructive
    revoke.click()
    expect(page.locator("p.warning")).to_contain_text(f"You are about to take group:lab from {USER}")  # and asks
    check_accessibility(page)
    page.get_by_role("button", name=f"Revoke group:lab from {USER}").click()
    expect(page.locator("p.notice")).to_have_text(f"{USER} no longer has group:lab.")
    expect(row.locator("ul.rights")).to_have_text("none")
    row.get_by_label("Right", exact=True).select_option("group")
    row.get_by_label("Group", exact=True).fill("no spaces allowed")
    row.get_by_role("button", name=f"Grant to {USER}").click()
    told = "group name 'no spaces allowed': 1-64 letters, digits, '.', '_' or '-'"
    expect(page.locator("p.error")).to_have_text(told)
    with accounts.database.session() as session:
        assert accounts.users.get(session, USER).group_names == []


def test_an_admin_is_warned_before_suspending_themselves(site: DemoStack, accounts: Accounts, page: Page) -> None:
    log_in(page, site, ADMIN)
    page.goto(f"{site.url}/admin/users")
    row = page.locator(f'tr[data-user="{ADMIN}"]')
    row.get_by_label(f"Reason for suspending {ADMIN}").fill("a test")
    row.get_by_role("button", name=f"Suspend {ADMIN}").click()
    expect(page.locator("p.warning")).to_contain_text("You are about to suspend your own account")
    check_accessibility(page)
    page.get_by_role("link", name="Cancel: change nothing").click()
    expect(page).to_have_url(f"{site.url}/admin/users")
    with accounts.database.session() as session:
        assert accounts.users.get(session, ADMIN).state == "approved"
