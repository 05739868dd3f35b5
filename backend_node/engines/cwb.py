"""The ``cwb`` engine: the same interface, answered by the real CQP through cwb-ccc.

Available when CWB is installed (``cqp`` on PATH or configured) and the ``cowbird[cwb]`` extra is.
Hardened as CQP front ends should be: ``cqp -c -x`` (child mode, no shell escapes or pipes), every
query wrapped in ``set QueryLock <random key>`` ... ``unlock <key>``, nothing but the re-serialised
query is ever sent, and on timeout the whole process group is killed and CQP restarted.

Hits come from CQP (``dump``); concordance lines are built from the corpus files by the shared
``results`` module (nothing of the native engine is imported), so this engine needs the
uncompressed token streams for KWIC lines, like the reader.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import signal
import threading
from pathlib import Path
from typing import Any

import numpy as np

from backend_node.engines.base import (
    DEFAULT_HARD_BOUNDARY,
    STRATEGIES,
    Context,
    Deadline,
    EngineOptions,
    Hit,
    KwicLine,
    QueryEngine,
    ResultSet,
    Strategy,
)
from backend_node.engines.errors import EngineUnavailable, InvalidOption, OutOfRange, QueryFailed, QueryTimeout
from backend_node.engines.results import ArrayResultSet, Matches, build_line
from backend_node.store import CwbCorpus
from query_lang import canonical


def find_cqp(configured: str | None = None) -> str | None:
    """The cqp binary: the configured path, else ``cqp`` on PATH (cwb-config tells where CWB lives)."""
    if configured:
        return configured if Path(configured).exists() else None
    return shutil.which("cqp")


class CwbEngine(QueryEngine):
    """One corpus served by a long-running ``cqp -c -x`` child process."""

    name = "cwb"

    def __init__(self, registry: Path, corpus_id: str, options: EngineOptions | None = None) -> None:
        self.options = options or EngineOptions()
        binary = find_cqp(self.options.cqp_binary)
        if binary is None:
            raise EngineUnavailable(
                "the cwb engine needs CWB's cqp: install CWB (cwb-config and cqp on PATH) or set cqp_binary"
            )
        try:
            from ccc.cqp import CQP  # cwb-ccc, the optional extra cowbird[cwb]
        except ImportError as exc:
            raise EngineUnavailable("the cwb engine needs cwb-ccc: pip install 'cowbird[cwb]'") from exc
        self._cqp_class = CQP
        self._binary = binary
        self._registry = registry
        self._store = CwbCorpus.open(registry, corpus_id)
        self._lock = threading.Lock()
        self._killed = False
        self._cqp: Any = self._start()

    def _start(self) -> Any:
        options = f"-c -x -r {shlex.quote(str(self._registry))}"
        cqp = self._cqp_class(binary=shlex.quote(self._binary), options=options)
        cqp.Exec(self._store.corpus_id.upper())
        if not cqp.Ok():
            raise EngineUnavailable(f"cqp cannot activate corpus {self._store.corpus_id}: {cqp.error_message!r}")
        return cqp

    def _kill(self) -> None:
        """Kill cqp and everything it started (it runs in its own process group)."""
        self._killed = True
        try:
            os.killpg(os.getpgid(self._cqp.CQP_process.pid), signal.SIGKILL)
        except ProcessLookupError:
            pass

    @property
    def corpus_id(self) -> str:
        return self._store.corpus_id

    @property
    def size(self) -> int:
        return self._store.size

    @property
    def p_attributes(self) -> list[str]:
        return list(self._store.entry.p_attributes)

    @property
    def s_attributes(self) -> list[str]:
        return list(self._store.entry.s_attributes)

    @property
    def meta_attributes(self) -> list[str]:
        return self._store.meta_attribute_names

    def _exec(self, command: str) -> str:
        output = self._cqp.Exec(command)
        if self._killed:
            raise QueryTimeout("the query ran out of time; cqp was stopped")
        if not self._cqp.Ok():
            message = self._cqp.error_message
            text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
            raise QueryFailed(f"cqp: {text.strip()}")
        return str(output)

    def run(
        self,
        query: str,
        strategy: Strategy = "standard",
        hard_boundary: int = DEFAULT_HARD_BOUNDARY,
        deadline: Deadline | None = None,
    ) -> ResultSet:
        if strategy not in STRATEGIES:
            raise InvalidOption(f"unknown matching strategy {strategy!r}")
        text = canonical(query)  # only the re-serialised, checked query ever reaches cqp
        seconds = deadline.seconds if deadline is not None and deadline.seconds is not None else None
        with self._lock:
            self._killed = False
            timer = threading.Timer(seconds, self._kill) if seconds is not None else None
            if timer is not None:
                timer.start()
            try:
                self._exec(f"set MatchingStrategy {strategy}")
                self._exec(f"set HardBoundary {int(hard_boundary)}")
                key = secrets.token_hex(16)
                self._exec(f"set QueryLock {key}")
                self._exec(f"Hits = {text}")
                self._exec(f"unlock {key}")
                dump = self._exec("dump Hits")
            finally:
                if timer is not None:
                    timer.cancel()
                if self._killed:
                    self._cqp = self._start()
        rows = [line.split("\t") for line in dump.splitlines() if line.strip()]
        table = np.asarray([[int(x) for x in row[:3]] for row in rows], dtype=np.int64).reshape(-1, 3)
        return ArrayResultSet(self._store, Matches(table[:, 0], table[:, 1], table[:, 2]))

    def context(self, cpos: int, context: Context, show: list[str], meta: list[str]) -> KwicLine:
        if not 0 <= cpos < self.size:
            raise OutOfRange(f"position {cpos} is outside the corpus (0 to {self.size - 1})")
        return build_line(self._store, Hit(cpos, cpos), context, show, meta)
