"""How the benchmarks time and weigh what they measure: the median of timed calls after a warm-up, one
timed GET of the front end's API, and a process's peak resident set."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import httpx

T = TypeVar("T")


def median_and_answer_ms(action: Callable[[], T], runs: int) -> tuple[float, T]:
    """The median of ``runs`` timed calls of ``action`` after one warm-up (lexicon tables, the OS's page
    cache, the nodes' cache), in ms, and what the last call returned."""
    answer = action()
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        answer = action()
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings), answer


def median_ms(action: Callable[[], object], runs: int) -> float:
    """The median of ``runs`` timed calls of ``action`` after one warm-up, in ms."""
    return median_and_answer_ms(action, runs)[0]


def timed_get(client: httpx.Client, path: str, params: Mapping[str, Any],
              shown: object = None) -> tuple[float, dict[str, object]]:
    """One GET of ``path`` with ``params``: the ms until its answer, and the answer's JSON. Any status
    but 200 raises RuntimeError naming ``path``, ``shown`` (by default ``params``) and the answer."""
    started = time.perf_counter()
    answer = client.get(path, params=params)
    took = (time.perf_counter() - started) * 1000
    if answer.status_code != 200:
        raise RuntimeError(f"{path} {params if shown is None else shown}: {answer.status_code} {answer.text[:300]}")
    body: dict[str, object] = answer.json()
    return took, body


def peak_mb(pid: int) -> float | None:
    """A process's peak resident set (VmHWM) in MB, from /proc; None when it has ended."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None
