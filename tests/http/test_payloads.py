"""The detail and the job page show a job's payload, its kind's ``redact=`` fields as
``"***"`` everywhere; ``--hide-payloads`` hides every payload; a payload whose kind this
process does not know (so not which fields to hide) is not shown."""

from __future__ import annotations

import attrs
import falcon.testing
import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.core import RegistrationError
from jobtable.core.builtins import NoopResult
from jobtable.entrypoints.http.app import create_app
from tests.http.conftest import AUTH, TOKEN, log_in
from tests.support.harness import JobSystem

CARD = "4242424242424242"


@attrs.frozen
class Card:
    number: str
    holder: str


@attrs.frozen
class Charge:
    card: Card
    cents: int
    cards: list[Card] = attrs.Factory(list)


def charge(ctx, payload: Charge) -> NoopResult:
    return NoopResult()


def register(system: JobSystem):
    return system.kinds.register(
        "charge", charge, payload=Charge, redact=["card.number", "cards.number"]
    )


def detail_and_page(system: JobSystem, job_id: str, **options: bool) -> tuple[dict, str]:
    app = create_app(system.runner, api_token=TOKEN, clock=system.clock, **options)
    client = falcon.testing.TestClient(app)
    detail = client.simulate_get(f"/api/v1/jobs/{job_id}/detail", headers=AUTH)
    assert detail.status_code == 200
    page = log_in(client).get(client, f"/ui/jobs/{job_id}")
    assert page.status_code == 200
    assert CARD not in detail.text and CARD not in page.text
    return detail.json, page.text


def test_the_payload_is_shown_with_its_redacted_fields_hidden(system):
    charges = register(system)
    job_id = charges.enqueue(
        Charge(card=Card(number=CARD, holder="Ann"), cents=500, cards=[Card(CARD, "Bo")])
    )
    detail, page = detail_and_page(system, job_id)
    assert detail["payload"] == {
        "card": {"number": "***", "holder": "Ann"},
        "cents": 500,
        "cards": [{"number": "***", "holder": "Bo"}],
    }
    assert "Ann" in page and "***" in page
    assert system.runner.detail(job_id).payload.count(CARD) == 2  # stored whole for the handler


def test_hide_payloads_hides_every_payload(system):
    job_id = register(system).enqueue(Charge(card=Card(CARD, "Ann"), cents=1))
    detail, page = detail_and_page(system, job_id, hide_payloads=True)
    assert detail["payload"] is None
    assert "Ann" not in page and "not shown" in page


def test_a_kind_this_process_does_not_know_has_its_payload_hidden():
    store = MemoryStore()
    web = JobSystem(store, workers=0)
    other = JobSystem(store, workers=0)
    job_id = register(other).enqueue(Charge(card=Card(CARD, "Ann"), cents=1))
    detail, page = detail_and_page(web, job_id)
    assert detail["payload"] is None and "Ann" not in page


def test_a_redacted_field_the_payload_does_not_have_is_refused(system):
    with pytest.raises(RegistrationError, match=r"redact: the payload has no field 'card\.pin'"):
        system.kinds.register("charge", charge, payload=Charge, redact=["card.pin"])
    with pytest.raises(RegistrationError, match="not one string"):
        system.kinds.register("charge", charge, payload=Charge, redact="card.number")
