"""Every dashboard route in one place: what is public, what takes the session cookie."""

from __future__ import annotations

import falcon

from jobtable.core import Runner
from jobtable.entrypoints.http.streams import StreamSlots
from jobtable.entrypoints.ui.actions import CancelAction, QueueAction, RetryAction
from jobtable.entrypoints.ui.bulk_page import BulkPage
from jobtable.entrypoints.ui.guard import LOGIN_PATH, DashboardGate
from jobtable.entrypoints.ui.history_panel import ChartData, ChartImage
from jobtable.entrypoints.ui.login import LoginResource, LogoutResource
from jobtable.entrypoints.ui.overview import OverviewReads
from jobtable.entrypoints.ui.pages import (
    DashboardRoot,
    JobEvents,
    JobListPage,
    JobPage,
    OverviewData,
    OverviewPage,
    SchedulesPage,
)
from jobtable.entrypoints.ui.static_files import StaticFiles

PUBLIC_ROUTES = frozenset({LOGIN_PATH, "/ui/static/{name}"})
"""Open to anyone: the login page and the script and stylesheet it needs."""


def add_dashboard(
    app: falcon.App,
    runner: Runner,
    gate: DashboardGate,
    *,
    streams: StreamSlots,
    hide_payloads: bool = False,
) -> None:
    app.add_route(LOGIN_PATH, LoginResource(gate))
    app.add_route("/ui/static/{name}", StaticFiles())
    app.add_route("/ui/logout", LogoutResource(gate))
    app.add_route("/ui", DashboardRoot(runner, gate))
    reads = OverviewReads(runner, wall=gate.now)
    app.add_route("/ui/", OverviewPage(runner, gate, reads))
    app.add_route("/ui/data/overview", OverviewData(runner, gate, reads))
    app.add_route("/ui/data/charts", ChartData(runner, gate))
    app.add_route("/ui/charts/{name}", ChartImage(runner, gate))
    app.add_route("/ui/jobs", JobListPage(runner, gate))
    app.add_route("/ui/jobs/bulk", BulkPage(runner, gate))
    app.add_route("/ui/schedules", SchedulesPage(runner, gate))
    app.add_route("/ui/jobs/{job_id}", JobPage(runner, gate, hide_payloads=hide_payloads))
    app.add_route("/ui/jobs/{job_id}/events", JobEvents(runner, gate, streams))
    app.add_route("/ui/jobs/{job_id}/cancel", CancelAction(runner, gate))
    app.add_route("/ui/jobs/{job_id}/retry", RetryAction(runner, gate))
    app.add_route("/ui/queues/{name}/pause", QueueAction(runner, gate, paused=True))
    app.add_route("/ui/queues/{name}/resume", QueueAction(runner, gate, paused=False))
