"""The overview's last hour: throughput and queue-wait charts (for every queue and kind, or
the ones picked), each kind's hour, and the routes that serve the charts and their data.

The charts are images (``/ui/charts/throughput.svg``, ``/ui/charts/wait.svg``) the page's
script reloads every ``CHART_SECONDS``; ``/ui/data/charts`` gives their numbers as JSON.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

import falcon

from jobtable.core import Runner
from jobtable.core.history import History
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.times import format_time
from jobtable.entrypoints.ui.charts import latency_svg, seconds_text, throughput_svg
from jobtable.entrypoints.ui.guard import DashboardGate
from jobtable.entrypoints.ui.layout import scrolling_table
from jobtable.entrypoints.ui.markup import Markup, el, fragment

CHART_SECONDS = 30
CHARTS = {"throughput": throughput_svg, "wait": latency_svg}
SVG = "image/svg+xml; charset=utf-8"


def picked(req: falcon.Request) -> tuple[str | None, str | None]:
    """The queue and kind a request picked for the charts (None: all)."""
    return req.get_param("queue") or None, req.get_param("kind") or None


def read_history(runner: Runner, queue: str | None, kind: str | None) -> History:
    """The charts' history, and the oldest waiting job of each queue it names (and the one
    picked)."""
    return runner.history(queue=queue, kind=kind, queues=[queue] if queue else [])


def _scope(history: History) -> str:
    parts = [
        f"queue {history.queue}" if history.queue else "",
        f"kind {history.kind}" if history.kind else "",
    ]
    return ", ".join(part for part in parts if part) or "every queue and kind"


def history_data(history: History) -> dict[str, Any]:
    """The charts' numbers, as ``/ui/data/charts`` serves them."""
    return {
        "at": format_time(history.at),
        "queue": history.queue,
        "kind": history.kind,
        "minutes": [
            {
                "minute": format_time(point.minute),
                "succeeded": point.succeeded,
                "failed": point.failed,
                "started": point.started,
                "wait_p50": point.wait_p50,
                "wait_p95": point.wait_p95,
            }
            for point in history.points
        ],
        "kinds": [
            {
                "kind": summary.kind,
                "succeeded": summary.succeeded,
                "failed": summary.failed,
                "wait_p50": summary.wait_p50,
                "wait_p95": summary.wait_p95,
            }
            for summary in history.kinds
        ],
        "oldest_waiting": history.oldest_waiting,
    }


def _wait(value: float | None) -> str:
    return "—" if value is None else seconds_text(value)


def _choice_form(history: History, kinds: list[str]) -> Markup:
    def select(name: str, label: str, values: list[str], chosen: str | None) -> Markup:
        options = [el("option", f"every {name}", value="")] + [
            el("option", value, value=value, selected=value == chosen)
            for value in sorted({*values, *([chosen] if chosen else [])})
        ]
        return el("label", label, el("select", options, name=name))

    return el(
        "form",
        select("queue", "Queue", history.queues, history.queue),
        select("kind", "Kind", kinds, history.kind),
        el("button", "Show", type="submit"),
        method="get",
        action="/ui/",
        class_="filters",
    )


def history_panel(history: History, kinds: list[str]) -> Markup:
    query = urllib.parse.urlencode(
        {k: v for k, v in (("queue", history.queue), ("kind", history.kind)) if v}
    )
    suffix = f"?{query}" if query else ""
    figures = [
        el(
            "figure",
            el(
                "img",
                src=f"/ui/charts/{name}.svg{suffix}",
                alt=alt,
                data_chart=name,
                width="720",
                height="180",
            ),
            el("figcaption", caption),
            class_="chart",
        )
        for name, caption, alt in (
            (
                "throughput",
                "Jobs finished per minute: succeeded (green), failed (red)",
                f"jobs finished per minute over the last hour, {_scope(history)}",
            ),
            (
                "wait",
                "Queue wait per minute, from due to start: p50 and p95",
                f"queue wait p50 and p95 per minute over the last hour, {_scope(history)}",
            ),
        )
    ]
    rows = [
        el(
            "tr",
            el(
                "th",
                el(
                    "a",
                    summary.kind,
                    href=f"/ui/jobs?{urllib.parse.urlencode({'kind': summary.kind})}",
                ),
                scope="row",
            ),
            el("td", summary.succeeded),
            el("td", summary.failed),
            el("td", _wait(summary.wait_p50)),
            el("td", _wait(summary.wait_p95)),
            data_kind=summary.kind,
        )
        for summary in history.kinds
    ]
    return el(
        "section",
        el("h2", "Last hour, ", _scope(history)),
        _choice_form(history, kinds),
        el("div", figures, class_="charts", data_refresh=str(CHART_SECONDS)),
        scrolling_table(
            ("Kind", "Succeeded", "Failed", "Wait p50", "Wait p95"),
            rows,
            empty="No job finished or started in the last hour.",
            id="kinds",
        ),
        id="history",
    )


class ChartImage:
    """GET /ui/charts/{name}: ``throughput.svg`` or ``wait.svg`` for the picked queue and kind."""

    auth_session = True

    def __init__(self, runner: Runner, gate: DashboardGate) -> None:
        self._runner = runner

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        draw = CHARTS.get(name.removesuffix(".svg")) if name.endswith(".svg") else None
        if draw is None:
            raise api_error(404, "not_found", "no such chart")
        history = read_history(self._runner, *picked(req))
        label = fragment(f"{name.removesuffix('.svg')} over the last hour, {_scope(history)}")
        resp.content_type = SVG
        resp.text = draw(history.points, label)
        resp.cache_control = ["no-store"]


class ChartData:
    """GET /ui/data/charts: the charts' numbers for the picked queue and kind."""

    auth_session = True

    def __init__(self, runner: Runner, gate: DashboardGate) -> None:
        self._runner = runner

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = history_data(read_history(self._runner, *picked(req)))
