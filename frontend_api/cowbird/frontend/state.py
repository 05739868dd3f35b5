"""The front end app's state, typed: made by ``create_app``; the node client (and Calf, when
enabled) are made in the lifespan, the account pages' signer when first needed. The fair-use counts
and the throttles keep their counts in the account database, shared by every front-end process."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from fastapi.templating import Jinja2Templates
from itsdangerous import Signer
from starlette.requests import Request

from cowbird.frontend.accounts.mail import Mailer
from cowbird.frontend.accounts.service import Accounts
from cowbird.frontend.accounts.throttle import Throttle, Window
from cowbird.frontend.corpora import CorpusCatalogue
from cowbird.frontend.estimates import EstimateLane
from cowbird.frontend.fair_use import FairUse
from cowbird.frontend.fanout import NodeClient
from cowbird.frontend.priority import Lanes
from cowbird.frontend.settings import FrontendSettings
from cowbird.frontend.stalled import Stalled
from cowbird.serving.metrics import Metrics
from cowbird.serving.started import started

if TYPE_CHECKING:
    from cowbird.calf.core import Reconstructor


@dataclass
class FrontendState:
    settings: FrontendSettings
    corpora: CorpusCatalogue
    metrics: Metrics
    accounts: Accounts
    mailer: Mailer | None
    fair_use: FairUse
    templates: Jinja2Templates
    login_throttle: Throttle
    registration_throttle: Window
    lanes: Lanes  # this process's background turns ([limits] background_slots)
    stalled: Stalled = field(default_factory=Stalled)  # queries that just ran out of time
    node_client: NodeClient | None = None  # the lifespan's
    calf: Reconstructor | None = None  # the lifespan's, when [calf] enabled
    session_signer: Signer | None = None  # made from the account database's secret on first use
    estimate_lane: EstimateLane | None = None  # anonymous estimates' turns, made on first use
    workshop: Any = None  # cowbird.frontend.workshop.Workshop when [workshop] enabled

    @property
    def nodes(self) -> NodeClient:
        return started(self.node_client, "the front end has not started (its node client is made in the lifespan)")

    @property
    def estimates(self) -> EstimateLane:
        """This process's anonymous estimates' lane (``[fair_use] anonymous_estimates`` at once)."""
        if self.estimate_lane is None:
            self.estimate_lane = EstimateLane(self.settings.fair_use.anonymous_estimates)
        return self.estimate_lane


def frontend_state(request: Request) -> FrontendState:
    return cast(FrontendState, request.app.state.frontend)
