"""The ``cwb`` engine: the same interface, answered by the real CQP through cwb-ccc.

Available when CWB is installed (``cqp`` on PATH or configured) and the ``cowbird[cwb]`` extra is.
Hardened as CQP front ends should be: ``cqp -c -x`` (child mode, no shell escapes or pipes), every
query wrapped in ``set QueryLock <random key>`` ... ``unlock <key>``, nothing but the re-serialised
query is ever sent (so ``cat ... > "file"``, ``set``, ``source``, ``define``, ``undump`` or ``unlock``
in a query are refused by the parser before CQP sees them), and on timeout — or when the caller
goes away — the whole process group is killed and CQP restarted for the next query; a CQP that
died on its own is restarted the same way.

Hits come from CQP (``dump``); concordance lines are built from the corpus files by the shared
``results`` module, which reads compressed attributes as CQP does. One kind of query is not CQP's
to answer: on a partition of a corpus cut in several (one that carries ``neighbours.json``), a
query that can read past the partition's edge (``reads_past_edges``: a lookahead, a closing tag, an
opening tag after a token, an MU window) is handed to ``across_cut``, the engine ``open_engine`` gives
it (the native engine on the same files, which reads the neighbours' tokens there) — CQP sees the
partition alone and would answer as at the corpus's real end or start, so the answer would depend on
where the corpus was cut. Nothing of the native engine is imported here: made without ``across_cut``,
the engine is CQP's alone (as the differential tests want it).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cowbird.core.errors import (
    EngineUnavailable,
    InvalidOption,
    QueryCancelled,
    QueryFailed,
    QueryTimeout,
    UnknownAttribute,
)
from cowbird.core.wire import STRATEGIES, Strategy
from cowbird.engines.base import Context, Deadline, EngineOptions, KwicLine, QueryEngine, ResultSet
from cowbird.engines.results import ArrayResultSet, Matches, context_line
from cowbird.query import Meet, MuUnion, Query, Tabular, reads_past_edges, serialize
from cowbird.query.cqp_ast import marked_anchors
from cowbird.store import CwbCorpus
from cowbird.store.neighbours import Neighbours

WATCH_SECONDS = 0.1
"""How often a running query's deadline and caller are checked."""

_UNKNOWN_ATTRIBUTE = re.compile(
    r"neither a positional/structural attribute|Structural attribute .* does not exist"
    r"|Attribute .* is not defined|Structure .* is not defined"
)


def cqp_error(message: str) -> QueryFailed | UnknownAttribute:
    """CQP's error message as cowbird's error: an unknown attribute has the code it has with the
    native engine (``unknown_attribute``); anything else CQP refuses is ``query_failed``."""
    text = " ".join(line.strip() for line in message.splitlines() if line.strip() and line.strip() != "CQP Error:")
    kind = UnknownAttribute if _UNKNOWN_ATTRIBUTE.search(text) else QueryFailed
    return kind(f"cqp: {text}")


def find_cqp(configured: str | None = None) -> str | None:
    """The cqp binary: the configured path, else ``cqp`` on PATH (cwb-config tells where CWB lives)."""
    if configured:
        return configured if Path(configured).exists() else None
    return shutil.which("cqp")


class CwbEngine(QueryEngine):
    """One corpus served by a long-running ``cqp -c -x`` child process."""

    name = "cwb"

    def __init__(self, registry: Path, corpus_id: str, options: EngineOptions | None = None,
                 across_cut: Callable[[], QueryEngine] | None = None) -> None:
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
        self._store.check_readable(reverse_index=False)  # CQP reads compressed indexes itself
        self._lock = threading.Lock()
        self._killed = False
        self._cancelled = False  # killed because the caller went away (not for running out of time)
        self._cqp: Any = self._start()
        # a partition of several: queries that read past its edges go to the engine across_cut opens
        self._across = across_cut if Neighbours.load(self._store.entry.home) is not None else None
        self._edges: QueryEngine | None = None
        self._edges_lock = threading.Lock()

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
        process = self._cqp.CQP_process
        try:
            os.killpg(os.getpgid(process.pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            process.wait(5)  # reap it: no zombie left behind
        except subprocess.TimeoutExpired:
            pass
        self._cqp.CQPrunning = False  # cwb-ccc's reading loop ends instead of waiting for a marker

    def _watch(self, deadline: Deadline | None, done: threading.Event) -> None:
        """Kill cqp when the query runs out of time or its caller goes away."""
        while not done.wait(WATCH_SECONDS):
            if deadline is None:
                continue
            remaining = deadline.remaining()
            if deadline.cancelled or (remaining is not None and remaining <= 0):
                self._cancelled = deadline.cancelled
                self._kill()
                return

    @property
    def process_id(self) -> int:
        """PID of the cqp child (its process group holds everything it runs)."""
        return int(self._cqp.CQP_process.pid)

    def close(self) -> None:
        """Stop cqp, and close its pipes (a node or test that opens many engines would otherwise keep
        three descriptors of each stopped cqp until the garbage collector finds them)."""
        with self._lock:
            self._kill()
            process = self._cqp.CQP_process
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError, ValueError):
                        pipe.close()

    @property
    def store(self) -> CwbCorpus:
        return self._store

    def _exec(self, command: str) -> str:
        output = self._cqp.Exec(command)
        if self._killed:
            if self._cancelled:
                raise QueryCancelled("the query was cancelled: the client went away; cqp was stopped")
            raise QueryTimeout("the query ran out of time; cqp was stopped")
        if self._cqp.CQP_process.poll() is not None or output is None:
            raise QueryFailed("cqp stopped unexpectedly; it is restarted for the next query")
        if not self._cqp.Ok():
            message = self._cqp.error_message
            text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
            raise cqp_error(text)
        return str(output)

    def _across_cut(self, opened: Callable[[], QueryEngine]) -> QueryEngine:
        """The engine for queries that read past the partition's edges, opened the first time it is needed."""
        with self._edges_lock:
            if self._edges is None:
                self._edges = opened()
            return self._edges

    def _run(self, query: Query, strategy: Strategy, hard_boundary: int, deadline: Deadline | None) -> ResultSet:
        if strategy not in STRATEGIES:
            raise InvalidOption(f"unknown matching strategy {strategy!r}")
        if self._across is not None and reads_past_edges(query):
            return self._across_cut(self._across).run(query, strategy, hard_boundary, deadline)
        text = serialize(query)  # only the re-serialised, checked query ever reaches cqp
        with self._lock:
            if self._killed or self._cqp.CQP_process.poll() is not None:
                self._cqp.CQPrunning = False  # nothing to tell the old one: it is gone
                self._cqp = self._start()  # stopped after the last query, or crashed since
            self._killed = self._cancelled = False
            done = threading.Event()
            watcher = threading.Thread(target=self._watch, args=(deadline, done), daemon=True)
            watcher.start()
            try:
                self._exec(f"set MatchingStrategy {strategy}")
                self._exec(f"set HardBoundary {int(hard_boundary)}")
                key = secrets.randbelow(2**31 - 2) + 1  # CQP wants a positive integer
                self._exec(f"set QueryLock {key}")
                try:
                    self._exec(f"Hits = {text}")
                finally:
                    if not self._killed and self._cqp.CQP_process.poll() is None:
                        self._cqp.Exec(f"unlock {key}")  # also after an error, or the lock stays
                dump = self._exec("dump Hits")
            finally:
                done.set()
                watcher.join()
        # dump: match, matchend, target, keyword (-1 where unset)
        rows = [line.split("\t") for line in dump.splitlines() if line.strip()]
        table = np.asarray([[int(x) for x in row[:4]] for row in rows], dtype=np.int64).reshape(-1, 4)
        pattern = query.pattern
        pattern_anchors = frozenset() if isinstance(pattern, Meet | MuUnion | Tabular) else marked_anchors(pattern)
        keyword = table[:, 3] if "keyword" in pattern_anchors else None
        return ArrayResultSet(self._store, Matches(table[:, 0], table[:, 1], table[:, 2], keyword))

    def context(
        self, cpos: int, context: Context, show: list[str], meta: list[str], end: int | None = None
    ) -> KwicLine:
        return context_line(self._store, cpos, end, context, show, meta)
