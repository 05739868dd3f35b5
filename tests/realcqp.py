"""Real CQP as an independent judge for differential tests.

Deliberately not ``backend_node/cowbird/engines/cwb.py``: a judge that shares code with the thing it
judges can share its bugs. One persistent ``cqp -c`` child serves every query: child mode prints
a version line at start, and ``.EOL.;`` makes it print ``-::-EOL-::-`` on stdout, which ends the
answer to a query. CQP reports errors on stderr only (a failed ``A = ...`` leaves the previous
``A`` in place), so stderr is read alongside stdout and any text there makes the answer an error.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from pathlib import Path

import numpy as np

from tests.support import REFERENCE, ROOT, reference_cqp, require_reference

MARKER = "-::-EOL-::-"
Hits = list[tuple[int, ...]]


class NoAnswer(Exception):
    """CQP gave no answer: it ran out of time (and was killed) or died; the next query starts a new one."""


class RealCqp:
    """Runs CQP queries on one corpus through a persistent ``cqp -c -r REGISTRY`` child."""

    def __init__(self, cqp: Path, registry: Path, corpus: str, timeout: float = 30.0) -> None:
        self.command = [str(cqp), "-c", "-r", str(registry)]
        self.corpus = corpus
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None

    def query(
        self, query: str, strategy: str = "standard", hard_boundary: int = 500, anchors: bool = False
    ) -> Hits | str:
        """The (match, matchend) pairs CQP finds, in its order, or CQP's error message; with
        ``anchors``, (match, matchend, target, keyword) with -1 for an unset anchor.

        Raises ``NoAnswer`` when CQP takes longer than ``timeout`` seconds or dies on the query."""
        if "\n" in query or "\r" in query:
            raise ValueError("a query is one line")  # a newline would let text past the query run as a command
        out, err = self._ask(
            f"set MatchingStrategy {strategy};\nset HardBoundary {hard_boundary};\n"
            f"A = {query};\nsize A;\ndump A;\n"
        )
        if err.strip():
            return err.strip()
        # the size, then one "match matchend target keyword" row per hit; numpy parses 10^5 rows fast
        numbers = np.fromstring(out, dtype=np.int64, sep=" ")
        rows = numbers[1:].reshape(-1, 4)
        assert len(rows) == numbers[0], f"CQP said {numbers[0]} hits but dumped {len(rows)}"
        if anchors:
            return [tuple(row) for row in rows.tolist()]
        return list(zip(rows[:, 0].tolist(), rows[:, 1].tolist(), strict=True))

    def run(self, commands: str) -> str:
        """The output of CQP commands (``A = ...; count A by lemma;``) on the corpus; an error raises."""
        out, err = self._ask(commands if commands.endswith("\n") else commands + "\n")
        if err.strip():
            raise ValueError(f"CQP refused {commands!r}: {err.strip()}")
        return out

    def automaton(self, query: str) -> str:
        """CQP's DFA for a query as ``set ShowDFA on`` prints it (``s0 = 0 s1``, ``s1 = fin``),
        whatever CQP says when it then runs the query (its "infinite loop" error, say)."""
        if "\n" in query or "\r" in query:
            raise ValueError("a query is one line")
        out, _ = self._ask(f"set ShowDFA on;\nA = {query};\nset ShowDFA off;\n")
        return "\n".join(line for line in out.splitlines() if line.startswith("s") and " =" in line)

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def _start(self) -> subprocess.Popen[bytes]:
        # cwd: the reference registry's HOME is relative to the project root
        process = subprocess.Popen(
            self.command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert process.stdout is not None and process.stderr is not None
        os.set_blocking(process.stdout.fileno(), False)
        os.set_blocking(process.stderr.fileno(), False)
        self.process = process
        out, err = self._ask(f"{self.corpus};\nset PrettyPrint off;\n")
        if not out.startswith("CQP version") or err.strip():
            self.close()
            raise RuntimeError(f"cqp did not start as expected: {out!r} {err!r}")
        return process

    def _ask(self, commands: str) -> tuple[str, str]:
        """Send commands, then the marker; stdout up to the marker and everything on stderr."""
        process = self.process or self._start()
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        process.stdin.write(f"{commands}.EOL.;\n".encode())
        process.stdin.flush()
        out, err = bytearray(), bytearray()
        deadline = time.monotonic() + self.timeout
        try:
            self._read(process, out, err, deadline)
        except BaseException:  # a test's timeout in the middle of an answer: its rest must not answer the next
            self.close()
            raise
        # CQP wrote any error before the marker, so it is in the pipe by now
        try:
            err.extend(os.read(process.stderr.fileno(), 1 << 20))
        except BlockingIOError:
            pass
        return out[: -len(MARKER) - 1].decode(), err.decode(errors="replace")

    def _read(self, process: subprocess.Popen[bytes], out: bytearray, err: bytearray, deadline: float) -> None:
        """stdout and stderr until the marker ends stdout (``NoAnswer`` past ``deadline``)."""
        assert process.stdout is not None and process.stderr is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ, out)
            selector.register(process.stderr, selectors.EVENT_READ, err)
            # stderr too, or a chatty error could fill its pipe and block CQP before the marker
            while not out.endswith(f"{MARKER}\n".encode()):
                remaining = deadline - time.monotonic()
                ready = selector.select(max(remaining, 0)) if remaining > 0 else []
                if not ready:
                    self.close()
                    raise NoAnswer(f"cqp gave no answer within {self.timeout:g} s")
                for key, _ in ready:
                    chunk = os.read(key.fd, 1 << 20)
                    if not chunk:
                        self.close()
                        raise NoAnswer(f"cqp died: {bytes(err).decode(errors='replace').strip()}")
                    key.data.extend(chunk)


def real_cqp(timeout: float = 30.0) -> RealCqp:
    """A judge on the EWT reference corpus, or skip (fail under CI) when CQP or the data is missing."""
    require_reference()
    return RealCqp(reference_cqp(), REFERENCE / "cwb" / "registry", "EWT", timeout)
