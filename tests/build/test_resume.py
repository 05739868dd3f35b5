"""A build killed with SIGKILL resumes where it stopped: finished shards are not redone (their markers keep
their times) and the corpus is byte for byte the one an uninterrupted build makes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.build import pages

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tools" / "build"), str(REPO)])}


def crawl(folder: Path) -> list[Path]:
    """Five WARC files (five shards) of generated English and German pages."""
    folder.mkdir(parents=True)
    return [pages.write_warc(folder / f"crawl-{k}.warc.gz", pages.make_pages(70 + k, 12, start=100 * k))
            for k in range(5)]


def command(inputs: list[Path], out: Path, jobs: int) -> list[str]:
    return [sys.executable, "-m", "cowbird", "build", *map(str, inputs), "-o", str(out), "--name", "resume",
            "--language", "en,de", "--jobs", str(jobs)]


def corpus(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes().replace(str(out).encode(), b"OUT")
            for p in sorted(out.rglob("*")) if p.is_file() and not p.relative_to(out).as_posix().startswith("work/")
            and p.name not in ("build.json", "report.html")}


def markers(out: Path) -> dict[str, int]:
    return {p.relative_to(out).as_posix(): p.stat().st_mtime_ns for p in (out / "work").rglob("*done")
            if p.name == "done" or p.suffix == ".done"}


def kill_after(argv: list[str], out: Path, marker: str, timeout: float = 240) -> dict[str, int]:
    """Start the build, SIGKILL it (and its workers: its process group) once ``marker`` exists."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV,
                               start_new_session=True, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    try:
        while not (out / marker).exists():
            if process.poll() is not None:
                raise AssertionError(f"the build ended before {marker} appeared: {process.stderr.read()!r}"
                                     if process.stderr else "the build ended early")
            assert time.monotonic() < deadline, f"{marker} did not appear"
            time.sleep(0.005)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
        if process.stderr:
            process.stderr.close()
    time.sleep(0.2)  # the workers of the killed group are gone too
    return markers(out)


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("jobs", "marker"), [(2, "work/clean/00000.done"), (1, "work/annotate/00001.done")])
def test_a_killed_build_resumes_without_redoing_finished_shards(tmp_path: Path, jobs: int, marker: str) -> None:
    inputs = crawl(tmp_path / "in")
    whole = subprocess.run(command(inputs, tmp_path / "whole", jobs), capture_output=True, text=True, env=ENV,
                           timeout=600, stdin=subprocess.DEVNULL)
    assert whole.returncode == 0, whole.stderr
    out = tmp_path / "killed"
    before = kill_after(command(inputs, out, jobs), out, marker)
    assert marker in before and "work/encode/done" not in before
    assert not (out / "resume.vrt.gz").exists()
    resumed = subprocess.run(command(inputs, out, jobs), capture_output=True, text=True, env=ENV, timeout=600,
                             stdin=subprocess.DEVNULL)
    assert resumed.returncode == 0, resumed.stderr
    after = markers(out)
    for name, stamp in before.items():
        assert after[name] == stamp, f"{name} was redone"
    finished_before = {name.split("/")[-1] for name in before if name.startswith("work/clean/")}
    said = resumed.stderr
    for shard in finished_before:  # the resumed build did not clean the finished shards again
        assert f"clean: shard {shard.removesuffix('.done')}" not in said
    assert "work/encode/done" in after
    ours, theirs = corpus(out), corpus(tmp_path / "whole")
    assert sorted(ours) == sorted(theirs) and "resume.vrt.gz" in ours
    for name in ours:
        assert ours[name] == theirs[name], f"{name} differs from the uninterrupted build's"
