"""The frame every dashboard page shares: head, navigation, logout, and the page's data.

No inline script or style (the Content-Security-Policy forbids both): the
page's script and stylesheet come from /ui/static, and what the script needs
to know rides on ``data-`` attributes of ``<body>``.
"""

from __future__ import annotations

from collections.abc import Sequence

import falcon

from jobtable.entrypoints.ui.guard import CSRF_FIELD
from jobtable.entrypoints.ui.markup import Markup, el, fragment

HTML = "text/html; charset=utf-8"
NAVIGATION = (
    ("overview", "/ui/", "Overview"),
    ("jobs", "/ui/jobs", "Jobs"),
    ("schedules", "/ui/schedules", "Schedules"),
)


def scrolling_table(
    heads: Sequence[str], rows: Sequence[Markup], *, empty: str, **attributes: object
) -> Markup:
    """A table in a box of its own that scrolls sideways on a narrow screen, with a row
    saying ``empty`` when there are no ``rows``; ``attributes`` go on the table."""
    body = list(rows) or [el("tr", el("td", empty, colspan=len(heads)))]
    return el(
        "div",
        el(
            "table",
            el("thead", el("tr", [el("th", head) for head in heads])),
            el("tbody", body),
            **attributes,
        ),
        class_="table-scroll",
    )


def action_form(action: str, label: str, *, csrf: str, danger: bool = False) -> Markup:
    """A button that POSTs to ``action`` with the session's CSRF token."""
    return el(
        "form",
        el("input", type="hidden", name=CSRF_FIELD, value=csrf),
        el("button", label, type="submit", class_="danger" if danger else None),
        method="post",
        action=action,
        class_="action",
    )


def page(
    title: str,
    content: Markup,
    *,
    name: str,
    csrf: str | None,
    data: dict[str, str] | None = None,
    crumb: Markup | None = None,
) -> str:
    """A whole document; ``csrf`` None is a page for someone not logged in (the login page).

    ``crumb`` is a line above the title saying where the page sits.
    """
    header = el(
        "header",
        el("a", "jobtable", href="/ui/", class_="brand"),
        csrf is not None
        and el(
            "nav",
            [
                el("a", label, href=href, aria_current="page" if key == name else None)
                for key, href, label in NAVIGATION
            ],
        ),
        csrf is not None and action_form("/ui/logout", "Log out", csrf=csrf),
    )
    attributes = {f"data_{key}": value for key, value in (data or {}).items()}
    body = el(
        "body",
        header,
        el("main", crumb and el("p", crumb, class_="crumb"), el("h1", title), content),
        data_page=name,
        data_csrf=csrf,
        **attributes,
    )
    head = el(
        "head",
        el("meta", charset="utf-8"),
        el("meta", name="viewport", content="width=device-width, initial-scale=1"),
        el("title", f"{title} · jobtable"),
        el("link", rel="icon", href="/ui/static/favicon.svg", type="image/svg+xml"),
        el("link", rel="stylesheet", href="/ui/static/dashboard.css"),
        el("script", src="/ui/static/dashboard.js", defer=True),
    )
    return "<!doctype html>\n" + fragment(el("html", head, body, lang="en"))


def send_page(resp: falcon.Response, document: str, *, status: int = 200) -> None:
    resp.status = status
    resp.content_type = HTML
    resp.text = document


def see_other(resp: falcon.Response, location: str) -> None:
    """303 to ``location``: after a POST the browser GETs the page (its cookies kept)."""
    resp.status = falcon.HTTP_303
    resp.location = location
