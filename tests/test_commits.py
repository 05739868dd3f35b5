"""Commit subjects stay within 72 characters (``docs/conventions.md``, "Commit messages") from the
commit that laid the tree out as the design card draws it on; the earlier history is as it was."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support import ROOT, unavailable

SINCE = "c11c462"
"""The first commit held to the rule ("Layout: the design card's folders are the source roots")."""


def test_every_commit_subject_since_the_rule_has_at_most_72_characters() -> None:
    if shutil.which("git") is None:
        unavailable("git (the commit history)")
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no commit history to check")
    known = subprocess.run(["git", "cat-file", "-e", f"{SINCE}^{{commit}}"], cwd=ROOT, capture_output=True)
    if known.returncode != 0:
        pytest.skip(f"the history does not reach {SINCE} (a shallow clone)")
    log = subprocess.run(["git", "log", "--format=%h %s", f"{SINCE}^..HEAD"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    long = [line for line in log if len(line.split(" ", 1)[1]) > 72]
    assert log and not long, long
