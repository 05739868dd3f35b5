"""Building a corpus in the browser, end to end (issue 67): a member of the builders' group starts a crawl
from five seed URLs of the loopback web, watches it, stops and resumes it, sees the build finish, publishes
the corpus and searches it — real Chromium, real front-end and node processes, the crawl and build as the
workshop's detached runner starts them. Inside a network namespace with only loopback; the workshop's crawls
may reach 127.0.0.0/8 only."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from cowbird.crawl.warc import WarcFiles
from cowbird.frontend.accounts import Accounts, Database, sqlite_url
from cowbird.frontend.workshop import alive
from tests.browser.conftest import PASSWORD
from tests.browser.pages import check_accessibility, search, shoot
from tests.crawl.loopweb import LoopWeb, Served
from tests.support import free_ports

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]

BUILDER, OUTSIDER = "grace", "linus"
DELAY = 0.5  # the workshop's crawl delay: slow enough for the page to see the crawl under way and stop it


class Site:
    def __init__(self, stack: DemoStack, served: Served) -> None:
        self.stack, self.served = stack, served
        self.url = stack.url


@pytest.fixture(scope="module")
def workshop_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The demo stack with the workshop on (as `cowbird demo --workshop` runs it), its crawls allowed the
    loopback web's addresses, and a builder and an outsider."""
    base = tmp_path_factory.mktemp("workshop-site")
    front, node1, node2, workshop_node = free_ports(4)
    with ExitStack() as stack_of:
        served = stack_of.enter_context(LoopWeb(hosts=80, seed=3).serve(base))
        stack = DemoStack(base / "demo", front, (node1, node2), log_level="warning", workshop_port=workshop_node,
                          workshop_allow=["127.0.0.0/8"], workshop_delay=DELAY)
        stack.prepare()
        database = Database(sqlite_url(stack.base / "cowbird-accounts.sqlite3"))
        database.upgrade()
        accounts = Accounts(database)
        with database.session() as session:
            for name in (BUILDER, OUTSIDER):
                user, _ = accounts.users.add(session, name, f"{name}@uni.example", "tests")
                accounts.users.set_password(session, user, PASSWORD, "tests")
            accounts.users.grant(session, accounts.users.get(session, BUILDER), "group:builders", "tests")
        database.close()
        stack.start()
        stack_of.callback(stack.stop)
        yield Site(stack, served)


def log_in(page: Page, site: Site, name: str) -> None:
    page.goto(f"{site.url}/login")
    page.fill('input[name="login"]', name)
    page.fill('input[name="password"]', PASSWORD)
    page.press('input[name="password"]', "Enter")
    expect(page).to_have_url(f"{site.url}/")


def job_state(page: Page) -> Any:
    return page.locator("#jobs .job").first.locator(".job-state")


@pytest.mark.timeout(600)
def test_a_linguist_crawls_builds_publishes_and_searches_a_corpus_in_the_browser(workshop_site: Site, page: Page,
                                                                                   tmp_path: Path) -> None:
    site = workshop_site
    log_in(page, site, BUILDER)
    page.get_by_role("link", name="Workshop").click()
    expect(page).to_have_url(f"{site.url}/workshop")
    page.wait_for_load_state("load")  # its module attaches the form's handlers (the page's HTML comes first)
    expect(page.locator("#no-jobs")).to_be_visible()
    page.fill("#crawl-name", "loopde")
    page.fill("#crawl-seeds", "\n".join(site.served.seeds(5)))
    page.select_option("#crawl-language", "de")
    page.fill("#crawl-pages", "200")
    page.get_by_role("button", name="Start the crawl").click()
    expect(page.locator("#form-message")).to_have_text("Started loopde.")
    card = page.locator("#jobs .job").first
    expect(card.locator(".job-name")).to_have_text("loopde")
    expect(job_state(page)).to_have_text("running", timeout=30_000)
    expect(card.locator(".job-summary")).to_contain_text("of 200 pages", timeout=30_000)
    card.get_by_role("button", name="Stop").click()
    expect(job_state(page)).to_have_text("stopped", timeout=60_000)
    stopped_at = int(card.locator(".job-summary").inner_text().split(" of ")[0].replace(",", ""))
    assert stopped_at < 200
    card.get_by_role("button", name="Resume").click()
    expect(job_state(page)).to_have_text("finished", timeout=400_000)
    expect(card.locator(".job-summary")).to_contain_text("200 of 200 pages")
    expect(card.locator(".job-summary")).to_contain_text("tokens")
    expect(card.locator(".job-over-time")).to_be_visible()
    expect(card.locator(".stages li.done")).to_have_count(2)
    check_accessibility(page)
    shoot(page, "workshop", tmp_path)
    card.locator(".access").select_option("public")
    card.get_by_role("button", name="Publish").click()
    expect(page.locator("#form-message")).to_contain_text("Published loopde")
    link = card.get_by_role("link", name="Search loopde")
    expect(link).to_be_visible()
    link.click()
    expect(page).to_have_url(f"{site.url}/?corpus=loopde")
    search(page, "Stadt")  # (once the page reached by the link has loaded its modules)
    expect(page.locator("#kwic tbody tr").first).to_be_visible(timeout=30_000)
    # the crawl kept to robots.txt and every delay, and fetched no page twice over its stop and resume
    requests = site.served.requests()
    assert site.served.violations(requests, DELAY) == []
    pages = [(r["host"], r["path"], r["query"]) for r in requests if r["path"] != "/robots.txt"]
    repeated = {p for p in pages if pages.count(p) > 1 and not p[1].startswith("/flaky/")}
    assert not repeated, repeated
    # anonymous users find it too (public), and without restarting anything
    answer = httpx.get(f"{site.url}/api/v1/query", params={"corpus": "loopde", "q": "Stadt"}, timeout=30)
    assert answer.status_code == 200 and answer.json()["total"] > 0, answer.text


@pytest.mark.timeout(120)
def test_the_workshop_is_for_builders_and_says_what_is_wrong(workshop_site: Site, page: Page) -> None:
    site = workshop_site
    log_in(page, site, OUTSIDER)
    expect(page.get_by_role("link", name="Workshop")).to_have_count(0)
    page.goto(f"{site.url}/workshop")
    expect(page.locator("main")).to_contain_text("building corpora is for administrators and the group 'builders'")
    assert httpx.get(f"{site.url}/api/v1/jobs", timeout=10).status_code == 401
    page.context.clear_cookies()
    log_in(page, site, BUILDER)
    page.goto(f"{site.url}/workshop")
    for name, seeds, message in (("Bad Name", "http://127.1.1.4:18080/", "name 'Bad Name'"),
                                 ("fine", "ftp://127.1.1.4/", "seeds: give http(s) URLs"),
                                 ("sample", "http://127.1.1.4:18080/", "a corpus of that name exists")):
        page.evaluate("document.querySelector('#crawl-name').removeAttribute('pattern')")
        page.fill("#crawl-name", name)
        page.fill("#crawl-seeds", seeds)
        page.get_by_role("button", name="Start the crawl").click()
        expect(page.locator("#form-message")).to_contain_text(message)
    jobs = json.loads(page.locator("#jobs-data").inner_text())
    assert all(job["name"] not in ("fine", "sample") for job in jobs)
    # a crawl whose seeds are outside the addresses the site's crawls may reach fails, saying so
    page.fill("#crawl-name", "outside")
    page.fill("#crawl-seeds", "http://10.1.2.3/")
    page.get_by_role("button", name="Start the crawl").click()
    card = page.locator("#jobs .job", has=page.locator(".job-name", has_text="outside"))
    expect(card.locator(".job-state")).to_have_text("failed", timeout=60_000)
    expect(card.locator(".job-error")).to_contain_text("no page was fetched")
    expect(card.locator(".job-error")).to_contain_text("host outside the allowed addresses")
    expect(card.get_by_role("button", name="Resume")).to_be_visible()


def restart_front_end(stack: DemoStack) -> None:
    """The front end stopped and started again, as an upgrade does; the nodes and the jobs go on."""
    front = stack.processes[-1]
    front.terminate()
    front.wait(30)
    stack.processes[-1] = subprocess.Popen([sys.executable, "-P", "-m", "cowbird", "serve", "--config", "cowbird.toml",
                                            "--workers", str(stack.workers), "--log-level", "warning"], cwd=stack.base)
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{stack.url}/api/v1/corpora", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the front end did not come back"
        time.sleep(0.3)


def job_of(site: Site, headers: dict[str, str], job_id: str) -> dict[str, Any]:
    answer = httpx.get(f"{site.url}/api/v1/jobs/{job_id}", headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    value: dict[str, Any] = answer.json()
    return value


@pytest.mark.timeout(500)
def test_a_job_goes_on_while_the_front_end_restarts_and_a_deleted_corpus_is_gone(workshop_site: Site) -> None:
    site = workshop_site
    database = Database(sqlite_url(site.stack.base / "cowbird-accounts.sqlite3"))
    accounts = Accounts(database)
    with database.session() as session:
        secret = accounts.tokens.create(session, accounts.users.get(session, BUILDER), "workshop").secret
    database.close()
    headers = {"Authorization": f"Bearer {secret}"}
    made = httpx.post(f"{site.url}/api/v1/jobs", headers=headers, timeout=30, json={
        "kind": "crawl", "name": "restarted", "seeds": site.served.seeds(5), "language": "de", "pages": 400})
    assert made.status_code == 200, made.text
    job_id = made.json()["id"]
    deadline = time.monotonic() + 60
    while (job_of(site, headers, job_id).get("crawl") or {}).get("pages", 0) < 10:
        assert time.monotonic() < deadline, job_of(site, headers, job_id)
        time.sleep(0.3)
    state = json.loads((site.stack.base / "workshop" / "jobs" / job_id / "state.json").read_text())
    assert alive(state["pid"]) and job_of(site, headers, job_id)["crawl"]["pages"] < 400
    restart_front_end(site.stack)  # in the middle of the crawl: the runner is not the front end's to take down
    deadline = time.monotonic() + 400
    while (job := job_of(site, headers, job_id))["state"] != "finished":
        assert job["state"] in ("running", "queued") and time.monotonic() < deadline, job
        time.sleep(1)
    assert job["crawl"]["pages"] == 400 and job["crawl"]["stop_reason"] == "page budget reached (400 pages)"
    assert job["built"] and job["build"]["tokens"] > 0
    published = httpx.post(f"{site.url}/api/v1/jobs/{job_id}/publish", headers=headers, json={"access": "login"},
                           timeout=60)
    assert published.status_code == 200 and published.json()["partitions"] == ["restarted_p01"], published.text
    query = {"corpus": "restarted", "q": "Stadt"}
    assert httpx.get(f"{site.url}/api/v1/query", params=query, timeout=30).status_code == 404  # login only
    found = httpx.get(f"{site.url}/api/v1/query", params=query, headers=headers, timeout=30)
    assert found.status_code == 200 and found.json()["total"] > 0, found.text
    again = httpx.delete(f"{site.url}/api/v1/jobs/{job_id}", headers=headers, timeout=30)
    assert again.status_code == 409 and "delete the corpus first" in again.json()["detail"]
    gone = httpx.delete(f"{site.url}/api/v1/corpora/restarted", headers=headers, timeout=60)
    assert gone.status_code == 200 and gone.json() == {"name": "restarted", "deleted": True}, gone.text
    assert not (site.stack.base / "workshop" / "registry" / "restarted_p01").exists()
    assert not (site.stack.base / "workshop" / "jobs" / job_id / "corpus").exists()
    time.sleep(1.5)  # every front-end process sees the change within a second
    names = [c["name"] for c in httpx.get(f"{site.url}/api/v1/corpora", headers=headers, timeout=30).json()["data"]]
    assert "restarted" not in names
    assert httpx.get(f"{site.url}/api/v1/query", params=query, headers=headers, timeout=30).status_code == 404
    kept = httpx.delete(f"{site.url}/api/v1/jobs/{job_id}", headers=headers, timeout=30)
    assert kept.status_code == 200 and job_id not in [j["id"] for j in kept.json()["data"]]
    assert not (site.stack.base / "workshop" / "jobs" / job_id).exists()


def german_warc(path: Path, site: Site, pages: int = 30) -> Path:
    """A WARC file of German prose pages of the loopback web, as another crawler might have written it."""
    web = site.served.web
    files = WarcFiles(path)
    for k in range(pages):
        host = web.of_kind["good"][k % len(web.of_kind["good"])]
        target = f"/p/{k // len(web.of_kind['good']) % host.pages}.html"
        status, headers, body = web.response(host.netloc, target)
        files.write(f"http://{host.netloc}{target}", host.ip, [("User-Agent", "another-crawler")], "GET",
                    f"{status} OK", list(headers.items()), body)
    files.close()
    return path / "crawl-00001.warc.gz"


@pytest.mark.timeout(300)
def test_a_build_of_uploaded_warc_files_published_for_a_group(workshop_site: Site, page: Page,
                                                             tmp_path: Path) -> None:
    site = workshop_site
    warc = german_warc(tmp_path / "warc", site)
    log_in(page, site, BUILDER)
    page.goto(f"{site.url}/workshop")
    page.fill("#build-name", "uploaded")
    page.set_input_files("#build-files", str(warc))
    page.select_option("#build-language", "de")
    page.get_by_role("button", name="Start the build").click()
    expect(page.locator("#form-message")).to_have_text("Started uploaded.", timeout=30_000)
    card = page.locator("#jobs .job", has=page.locator(".job-name", has_text="uploaded"))
    expect(card.locator(".job-state")).to_have_text("finished", timeout=240_000)
    expect(card.locator(".job-summary")).to_contain_text("tokens")
    card.locator(".access").select_option("group:builders")
    card.get_by_role("button", name="Publish").click()
    expect(card.get_by_role("link", name="Search uploaded")).to_be_visible()
    query = {"corpus": "uploaded", "q": "Stadt"}
    assert httpx.get(f"{site.url}/api/v1/query", params=query, timeout=30).status_code == 404  # not for all
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    found = httpx.get(f"{site.url}/api/v1/query", params=query, cookies=cookies, timeout=30)
    assert found.status_code == 200 and found.json()["total"] > 0, found.text
    urls = {hit["meta"].get("text_url") for hit in httpx.get(
        f"{site.url}/api/v1/query", params={**query, "meta": "text_url"}, cookies=cookies, timeout=30).json()["hits"]}
    assert urls and all(str(url).startswith("http://127.") for url in urls)
    # what is not a WARC file is refused before anything is kept
    refused = page.evaluate("""async () => {
        const csrf = document.querySelector('#logout input[name="csrf"]').value;
        const r = await fetch('/api/v1/uploads', {method: 'POST', body: 'just some text, not a WARC file',
            headers: {'X-CSRF-Token': csrf, 'X-File-Name': 'notes.warc'}});
        return [r.status, (await r.json()).detail];
    }""")
    assert refused[0] == 400 and "notes.warc: not a WARC or ARC file" in refused[1]
