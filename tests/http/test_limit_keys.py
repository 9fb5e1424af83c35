"""POST /api/v1/jobs for a kind with a keyed limit: the key is computed from the payload;
a payload the key cannot be computed from is refused 400, naming the field, storing nothing."""

from __future__ import annotations

import json

import attrs

from jobtable.core import JobContext, Limit
from tests.http.conftest import AUTH

JSON_AUTH = {**AUTH, "Content-Type": "application/json"}


@attrs.frozen
class Charge:
    customer: str | None = None
    cents: int = 0


@attrs.frozen
class Charged:
    def public(self) -> dict:
        return {}


def charge(ctx: JobContext, payload: Charge) -> Charged:
    return Charged()


def strict_key(payload: Charge) -> str:
    if payload.cents < 0:
        raise ValueError("sk-live-5e1f")  # a secret in the text: never shown
    return f"cents-{payload.cents}"


def post(client, kind: str, payload: dict):
    body = json.dumps({"kind": kind, "payload": payload})
    return client.simulate_post("/api/v1/jobs", body=body, headers=JSON_AUTH)


def test_a_keyed_limits_key_is_stored_and_a_payload_without_one_is_refused(system, client):
    system.kinds.register("charge", charge, payload=Charge, limit=Limit(1, key="customer"))
    system.kinds.register("cents", charge, payload=Charge, limit=Limit(1, key=strict_key))
    stored = post(client, "charge", {"customer": "ada"})
    assert stored.status_code == 202
    assert system.store.inner.row(stored.json["id"])["limit_key"] == "ada"
    assert post(client, "cents", {"cents": 5}).status_code == 202

    for kind, payload in (("charge", {}), ("cents", {"cents": -1})):
        refused = post(client, kind, payload)
        assert refused.status_code == 400
        assert refused.json["error"]["code"] == "invalid_option"
        assert refused.json["error"]["message"].startswith("limit key: ")
        assert "sk-live" not in refused.text
    assert len(system.store.inner._rows) == 2
