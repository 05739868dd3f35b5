"""Interactive or background work: a request is classed by its estimated cost, not by its kind.

An operation the table declares ``estimated`` (``operations.py``: a sorted page, an export, an
analysis of hits) has its query estimated on the nodes before it runs (``Visit.classify``). Its
cost is the estimate's seconds plus the hits it handles times the operation's measured ``per_hit``
cost (``cost_seconds``). Within the interactive budget (``[limits] interactive_seconds``) it is
*interactive*: it runs at once in the process it was asked of, its node calls interactive — a
frequency list of a rare word, a sorted page at any offset once the selection makes it cheap, a
small export. Beyond the budget, or when its query cannot be estimated, it is *background* work:
the interactive process hands it over to the background process (``background.ToBackground``,
which asks again there and streams the answer back), where it waits for the viewer's turn by cost
(``priority.Lanes``) and runs niced, its node calls background. What the table declares
``background`` (word and keyword lists, word sketches, trends, comparisons: no estimate of them
yet) is forwarded there by its path; what it declares ``interactive`` is never estimated.

Every answer of an operation says how it was classed and why it waited (``ClassHeaders``):
``X-Cowbird-Class`` (``interactive`` or ``background``), ``X-Cowbird-Class-Reason``, the estimated
seconds (``X-Cowbird-Estimated-Seconds``, where an estimate was made) and ``X-Cowbird-Wait-Ms``, the
time it waited before its work began (for a place among the viewer's queries and for its turn).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.types import Message, Receive, Scope, Send

from cowbird.core.search import CostEstimate
from cowbird.frontend.priority import Priority
from cowbird.serving.asgi import HttpMiddleware

CLASS_HEADER = "X-Cowbird-Class"
REASON_HEADER = "X-Cowbird-Class-Reason"
ESTIMATE_HEADER = "X-Cowbird-Estimated-Seconds"
WAIT_HEADER = "X-Cowbird-Wait-Ms"
CLASSED_SCOPE = "cowbird.classed"
"""The request's :class:`Classing` in its scope (``ClassHeaders`` puts it there, the route fills it)."""
HAND_OVER_SCOPE = "cowbird.hand_over"
"""Set in a request's scope by ``ToBackground``: work classed background may be handed over (the
background process runs it) rather than run here."""
HANDED_OVER = b"x-cowbird-handed-over"
"""Between the processes only: a handed-over request's class as the interactive process found it
(``{"seconds": …, "reason": …}``); a client's header of that name is dropped."""


@dataclass
class Classed:
    """How a request was classed, and why."""

    priority: Priority
    reason: str
    estimate: CostEstimate | None = None
    """The estimate its class was decided by (its work runs with it: not estimated again)."""
    seconds: float | None = None
    """Its estimated cost (node and front-end seconds), where it was estimated."""

    @property
    def background(self) -> bool:
        return self.priority == "background"

    def handed_over(self) -> bytes:
        """What the background process is told of it when it is handed over."""
        return json.dumps({"seconds": self.seconds, "reason": self.reason}).encode("ascii")

    @classmethod
    def from_handed_over(cls, told: bytes | None) -> Classed:
        """The class of a request the interactive process forwarded (``told``: its ``HANDED_OVER``
        header, None for a request forwarded by its path)."""
        if told is None:
            return cls("background", "background work of its kind (not estimated)")
        about = json.loads(told)
        seconds = about.get("seconds")
        return cls("background", str(about.get("reason", "")),
                   seconds=float(seconds) if isinstance(seconds, int | float) else None)


@dataclass
class Classing:
    """One request's class and wait, as its answer's headers say them (``ClassHeaders``)."""

    classed: Classed | None = None
    waited: float | None = None
    """Seconds its work waited before it began."""

    def headers(self) -> list[tuple[bytes, bytes]]:
        if self.classed is None:
            return []
        told = [(CLASS_HEADER.lower().encode(), self.classed.priority.encode()),
                (REASON_HEADER.lower().encode(), _ascii(self.classed.reason))]
        if self.classed.seconds is not None:
            told.append((ESTIMATE_HEADER.lower().encode(), f"{self.classed.seconds:.3g}".encode()))
        if self.waited is not None:
            told.append((WAIT_HEADER.lower().encode(), f"{self.waited * 1000:.0f}".encode()))
        return told


def _ascii(text: str) -> bytes:
    return text.encode("ascii", "replace")[:300]


def classing_of(scope: Scope) -> Classing | None:
    found = scope.get(CLASSED_SCOPE)
    return found if isinstance(found, Classing) else None


def cost_seconds(estimate: CostEstimate, per_hit: float, handled: int | None = None,
                 fixed: float = 0.0) -> float | None:
    """A request's estimated cost: its query's estimated seconds plus ``per_hit`` seconds for each hit
    it handles (``handled``, at most the estimated hits: an export's rows; None: every hit) plus its
    ``fixed`` seconds (``PublicOperation``'s measured costs). None when the estimate cannot tell (the
    hits or the time unknown)."""
    if estimate.hits is None or estimate.seconds is None:
        return None
    hits = estimate.hits if handled is None else min(handled, estimate.hits)
    return estimate.seconds + fixed + hits * per_hit


def class_by_cost(estimate: CostEstimate, per_hit: float, budget: float, handled: int | None = None,
                  fixed: float = 0.0) -> Classed:
    """Interactive within ``budget`` seconds of estimated cost (``cost_seconds``), background beyond it
    or unknown."""
    return class_by_seconds(cost_seconds(estimate, per_hit, handled, fixed), budget, estimate)


def class_by_seconds(seconds: float | None, budget: float, estimate: CostEstimate | None = None) -> Classed:
    """Interactive within ``budget`` seconds of estimated cost, background beyond it or unknown."""
    if seconds is None:
        return Classed("background", "its cost could not be estimated", estimate)
    within = seconds <= budget
    return Classed("interactive" if within else "background",
                   f"estimated at {seconds:.3g} s, {'within' if within else 'beyond'} the interactive {budget:g} s",
                   estimate, seconds)


class ClassHeaders(HttpMiddleware):
    """Gives each request a :class:`Classing` and its answer the headers that say it."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        classing = Classing()
        scope = {**scope, CLASSED_SCOPE: classing}

        async def told(message: Message) -> None:
            if message["type"] == "http.response.start" and classing.classed is not None:
                message = {**message, "headers": [*message.get("headers", []), *classing.headers()]}
            await send(message)

        await self.app(scope, receive, told)
