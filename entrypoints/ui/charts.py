"""The overview's charts, drawn on the server as SVG (no chart library, no script): jobs
finished per minute (succeeded and failed, stacked), and the queue wait per minute (p50 and
p95, on a log scale), over the last hour. Each bar and point carries a ``<title>`` with its
numbers; every text is escaped by ``markup``."""

from __future__ import annotations

import math
from collections.abc import Sequence

from jobtable.core.minutes import MinutePoint
from jobtable.entrypoints.ui.markup import Markup, el, fragment

WIDTH, HEIGHT = 720, 180
LEFT, RIGHT, TOP, BOTTOM = 52, 8, 10, 24
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
SUCCEEDED, FAILED = "#2e8b57", "#c0392b"
P50, P95 = "#2456c7", "#d08a00"
GRID, INK = "#dde1e8", "#5c6577"
WAIT_TICKS = (0.01, 0.1, 1.0, 10.0, 60.0, 600.0, 3600.0)


def seconds_text(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:g} ms"
    if seconds < 60:
        return f"{seconds:g} s"
    if seconds < 3600:
        return f"{seconds / 60:g} min"
    return f"{seconds / 3600:g} h"


def _svg(label: str, *children: object) -> str:
    return el(
        "svg",
        el("title", label),
        *children,
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {WIDTH} {HEIGHT}",
        width=str(WIDTH),
        height=str(HEIGHT),
        role="img",
        aria_label=label,
        font_family="system-ui, sans-serif",
        font_size="11",
    )


def _text(x: float, y: float, text: str, anchor: str = "end") -> Markup:
    return el("text", text, x=f"{x:.1f}", y=f"{y:.1f}", fill=INK, text_anchor=anchor)


def _x_axis(points: Sequence[MinutePoint]) -> Markup:
    """Minute labels under the plot: an hour ago, half an hour ago, now."""
    step = PLOT_W / max(1, len(points))
    marks = []
    for index, label in ((0, "-60 min"), (len(points) // 2, "-30 min"), (len(points) - 1, "now")):
        if index < len(points):
            x = LEFT + (index + 0.5) * step
            marks.append(_text(x, HEIGHT - 6, label, anchor="middle"))
    return fragment(*marks)


def _nice_ceiling(value: int) -> int:
    """The axis' top: 1, 2 or 5 times a power of ten, at least ``value``."""
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value)


def throughput_svg(points: Sequence[MinutePoint], label: str) -> str:
    top = _nice_ceiling(max((p.succeeded + p.failed for p in points), default=0))
    step = PLOT_W / max(1, len(points))
    bars = []
    for index, point in enumerate(points):
        x = LEFT + index * step + 1
        width = max(1.0, step - 2)
        ok_h = PLOT_H * point.succeeded / top
        bad_h = PLOT_H * point.failed / top
        tip = f"{point.minute:%H:%M} UTC: {point.succeeded} succeeded, {point.failed} failed"
        bars.append(
            el(
                "g",
                el("title", tip),
                el(
                    "rect",
                    x=f"{x:.1f}",
                    y=f"{TOP + PLOT_H - ok_h:.1f}",
                    width=f"{width:.1f}",
                    height=f"{ok_h:.1f}",
                    fill=SUCCEEDED,
                ),
                el(
                    "rect",
                    x=f"{x:.1f}",
                    y=f"{TOP + PLOT_H - ok_h - bad_h:.1f}",
                    width=f"{width:.1f}",
                    height=f"{bad_h:.1f}",
                    fill=FAILED,
                ),
                el(
                    "rect",
                    x=f"{x - 1:.1f}",
                    y=str(TOP),
                    width=f"{step:.1f}",
                    height=str(PLOT_H),
                    fill="transparent",
                ),
            )
        )
    grid = [
        fragment(
            el(
                "line",
                x1=str(LEFT),
                x2=str(WIDTH - RIGHT),
                y1=f"{y:.1f}",
                y2=f"{y:.1f}",
                stroke=GRID,
            ),
            _text(LEFT - 6, y + 4, f"{value:g}"),
        )
        for value, y in ((top, TOP), (top / 2, TOP + PLOT_H / 2), (0, TOP + PLOT_H))
    ]
    return _svg(label, *grid, *bars, _x_axis(points))


def _wait_y(seconds: float) -> float:
    low, high = math.log10(0.005), math.log10(3600.0)
    share = (math.log10(max(0.005, min(3600.0, seconds))) - low) / (high - low)
    return TOP + PLOT_H * (1 - share)


def latency_svg(points: Sequence[MinutePoint], label: str) -> str:
    step = PLOT_W / max(1, len(points))
    grid = [
        fragment(
            el(
                "line",
                x1=str(LEFT),
                x2=str(WIDTH - RIGHT),
                y1=f"{_wait_y(t):.1f}",
                y2=f"{_wait_y(t):.1f}",
                stroke=GRID,
            ),
            _text(LEFT - 6, _wait_y(t) + 4, seconds_text(t)),
        )
        for t in WAIT_TICKS
    ]
    lines = []
    for name, color in (("wait_p95", P95), ("wait_p50", P50)):
        runs: list[list[str]] = [[]]
        dots = []
        for index, point in enumerate(points):
            value = getattr(point, name)
            if value is None:
                runs.append([])
                continue
            x, y = LEFT + (index + 0.5) * step, _wait_y(value)
            runs[-1].append(f"{x:.1f},{y:.1f}")
            tip = f"{point.minute:%H:%M} UTC: {name[5:]} wait {seconds_text(value)}"
            dots.append(el("circle", el("title", tip), cx=f"{x:.1f}", cy=f"{y:.1f}", r="2.5",
                           fill=color))  # fmt: skip
        lines.extend(
            el("polyline", points=" ".join(run), fill="none", stroke=color, stroke_width="2")
            for run in runs
            if len(run) > 1
        )
        lines.extend(dots)
    legend = fragment(
        _text(WIDTH - RIGHT - 60, TOP + 10, "p50", anchor="start"),
        el("rect", x=str(WIDTH - RIGHT - 75), y=str(TOP + 3), width="10", height="8", fill=P50),
        _text(WIDTH - RIGHT - 20, TOP + 10, "p95", anchor="start"),
        el("rect", x=str(WIDTH - RIGHT - 35), y=str(TOP + 3), width="10", height="8", fill=P95),
    )
    return _svg(label, *grid, *lines, legend, _x_axis(points))
