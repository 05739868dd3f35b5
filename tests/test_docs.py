"""The documentation as a newcomer meets it: the README is a first page (what cowbird is, the two
commands, a first session) that leads each kind of user into ``docs/``, and every relative link in
the README, ``docs/`` and ``deploy/README.md`` reaches a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "deploy" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_is_a_first_page_with_a_path_for_each_kind_of_user() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    assert "make demo" in text and "make test" in text and "### A first session" in text
    paths = text.split("## Where next", 1)[1]
    for who in ("In the browser", "From scripts over HTTP GET", "Administrators", "Developers"):
        assert who in paths, who
    for page in ("browser", "http-api", "corpora-and-nodes", "administration", "calf", "development", "performance"):
        assert f"(docs/{page}.md)" in paths, page


def test_every_relative_link_reaches_a_file() -> None:
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []
