"""What the crawl benchmarks share: the loopback web (tests/crawl/loopweb.py) served inside a network
namespace with only loopback, and a crawl's seeds on it."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.crawl.loopweb import Served


@contextmanager
def served_web(hosts: int, seed: int, prefix: str) -> Iterator[tuple[Path, Served, Path]]:
    """The loopback web of ``hosts`` generated hosts from ``seed``, served with its request log in a fresh
    temporary folder named ``prefix``…: the folder, the running web and a seeds file of five of its pages.
    First, unless it runs there already, the script runs itself again inside a network namespace with only
    loopback (and this call never returns)."""
    from tests.loopback import reexec_in_loopback_namespace

    reexec_in_loopback_namespace()
    from tests.crawl.loopweb import LoopWeb

    web = LoopWeb(hosts=hosts, seed=seed)
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp, web.serve(Path(tmp)) as served:
        seeds = Path(tmp) / "seeds.txt"
        seeds.write_text("\n".join(served.seeds(5)) + "\n")
        yield Path(tmp), served, seeds
