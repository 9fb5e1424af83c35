from __future__ import annotations

import re
from collections.abc import Iterator

import attrs
import falcon.testing
import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.entrypoints.http.app import create_app
from tests.support.harness import JobSystem

TOKEN = "test-token-7d1e"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def system() -> Iterator[JobSystem]:
    made = JobSystem(MemoryStore(), workers=1)
    yield made
    made.stop()


@pytest.fixture
def client(system) -> falcon.testing.TestClient:
    app = create_app(
        system.runner,
        api_token=TOKEN,
        version="9.9.9",
        logger=system.logs.logger,
        clock=system.clock,
    )
    return falcon.testing.TestClient(app)


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@attrs.frozen
class Browser:
    """What a logged-in browser holds: the session cookie, and the CSRF token its pages carry."""

    cookie: str
    csrf: str

    @property
    def headers(self) -> dict[str, str]:
        """The Cookie header (falcon.testing drops ``cookies=`` on some methods)."""
        return {"Cookie": f"jobtable_session={self.cookie}"}

    def get(self, client, path: str, **headers: str):
        return client.simulate_get(path, headers={**self.headers, **headers})

    def post(self, client, path: str, *, body: str | None = None, **headers: str):
        """An action as the page's form sends it: same origin, the CSRF token in the form."""
        return client.simulate_post(
            path,
            body=f"csrf={self.csrf}" if body is None else body,
            headers={**self.headers, **FORM, "Sec-Fetch-Site": "same-origin", **headers},
        )


def log_in(client: falcon.testing.TestClient, token: str = TOKEN) -> Browser:
    answer = client.simulate_post("/ui/login", body=f"token={token}", headers=FORM)
    assert answer.status_code == 303, answer.text
    cookie = answer.cookies["jobtable_session"].value
    page = client.simulate_get("/ui/", headers={"Cookie": f"jobtable_session={cookie}"})
    match = re.search(r'data-csrf="([^"]+)"', page.text)
    assert match is not None
    return Browser(cookie=cookie, csrf=match.group(1))
