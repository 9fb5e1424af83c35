"""GET /api/v1/jobs: newest first, filtered, a page at a time behind an opaque cursor."""

from __future__ import annotations

import datetime

import attrs
import pytest

from jobtable.core import Failure, JobContext, NoopPayload
from jobtable.core.jobs import MAX_PAGE
from jobtable.entrypoints.http.pages import decode_cursor, encode_cursor
from tests.http.conftest import AUTH
from tests.http.test_operations import conforming

PATH = "/api/v1/jobs"


@attrs.frozen
class Letter:
    to: str


@attrs.frozen
class Sent:
    def public(self):
        return {"sent": True}


def send(ctx: JobContext, payload: Letter) -> Sent:
    if payload.to == "nobody":
        raise Failure("no_address")
    return Sent()


def listed(client, **params) -> dict:
    result = client.simulate_get(PATH, headers=AUTH, params=params)
    assert result.status_code == 200, result.text
    return conforming(result, PATH).json


def ids(page: dict) -> list[str]:
    return [job["id"] for job in page["jobs"]]


def refusal(client, **params) -> str:
    result = client.simulate_get(PATH, headers=AUTH, params=params)
    assert result.status_code == 400, result.text
    assert conforming(result, PATH).json["error"]["code"] == "invalid_option"
    return result.json["error"]["message"]


def every_page(client, **params) -> list[dict]:
    pages = [listed(client, **params)]
    while pages[-1]["next_cursor"] is not None:
        pages.append(listed(client, **params, cursor=pages[-1]["next_cursor"]))
    return pages


@pytest.fixture
def post(system):
    return system.kinds.register("post", send, payload=Letter, failure_codes=["no_address"])


def test_the_list_is_newest_first_in_the_five_key_shape_with_each_jobs_state(system, client):
    first = system.runner.builtins.noop.enqueue(NoopPayload())
    second = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.drain()
    third = system.runner.builtins.noop.enqueue(NoopPayload())
    page = listed(client)
    assert ids(page) == [third, second, first]
    assert page["next_cursor"] is None
    assert page["jobs"][0] == {
        "id": third, "kind": "noop", "status": "queued", "result": None, "error": None,
        "state": "available",
    }  # fmt: skip
    assert page["jobs"][2] == {
        "id": first, "kind": "noop", "status": "succeeded", "result": {"ok": True}, "error": None,
        "state": "succeeded",
    }  # fmt: skip


def test_filters_by_status_kind_and_queue_combine(system, client, post):
    sent = post.enqueue(Letter(to="ann"))
    bounced = post.enqueue(Letter(to="nobody"))
    system.runner.drain()
    waiting = post.enqueue(Letter(to="bob"), queue="mail")
    later = post.enqueue(Letter(to="cy"), queue="mail", delay=3600)
    other = system.runner.builtins.noop.enqueue(NoopPayload(), queue="mail")
    assert ids(listed(client, status="failed")) == [bounced]
    assert ids(listed(client, status="succeeded", kind="post")) == [sent]
    assert ids(listed(client, status="queued")) == [other, later, waiting]  # due later too
    assert ids(listed(client, kind="post", queue="mail")) == [later, waiting]
    assert ids(listed(client, queue="mail", status="queued", kind="noop")) == [other]
    assert ids(listed(client, kind="nothing")) == []
    # An empty parameter is no filter (an HTML form sends one for "any").
    assert ids(listed(client, status="", kind="", queue="")) == ids(listed(client))


def test_pages_follow_the_cursor_to_the_end_with_nothing_missed_or_repeated(system, client):
    made = [system.runner.builtins.noop.enqueue(NoopPayload()) for _ in range(25)]
    pages = every_page(client, limit="10")
    assert [len(page["jobs"]) for page in pages] == [10, 10, 5]
    assert [job_id for page in pages for job_id in ids(page)] == made[::-1]


def test_a_job_enqueued_while_paging_does_not_shift_the_pages_after(system, client):
    made = [system.runner.builtins.noop.enqueue(NoopPayload()) for _ in range(6)]
    first = listed(client, limit="3")
    system.runner.builtins.noop.enqueue(NoopPayload())  # newer than every page: not in the next
    second = listed(client, limit="3", cursor=first["next_cursor"])
    assert ids(first) + ids(second) == made[::-1]
    assert second["next_cursor"] is None


def test_a_filtered_list_pages_over_only_the_matching_jobs(system, client, post):
    letters = []
    for number in range(7):
        letters.append(post.enqueue(Letter(to=f"n{number}")))
        system.runner.builtins.noop.enqueue(NoopPayload())
    pages = every_page(client, kind="post", limit="3")
    assert [job_id for page in pages for job_id in ids(page)] == letters[::-1]


def test_limit_defaults_to_50_and_is_clamped_to_1_through_500(system, client):
    encoded = system.runner.encode("noop", {})
    system.runner.enqueue_batch([encoded] * (MAX_PAGE + 1))
    assert len(listed(client)["jobs"]) == 50
    for asked, size in [("0", 1), ("-7", 1), ("1", 1), ("500", 500), ("501", 500),
                        ("+3", 3), ("007", 7), ("9" * 40, 500), ("-" + "9" * 40, 1)]:  # fmt: skip
        page = listed(client, limit=asked)
        assert len(page["jobs"]) == size, asked
        assert page["next_cursor"] is not None


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"limit": "ten"}, "limit: must be a whole number"),
        ({"limit": "1.5"}, "limit: must be a whole number"),
        ({"limit": "1_000"}, "limit: must be a whole number"),
        ({"status": "done"}, "status: must be one of queued, running, succeeded, failed"),
        ({"status": "QUEUED"}, "status: must be one of"),
        ({"cursor": "not a cursor"}, "cursor: is not a cursor this API gave"),
        ({"cursor": encode_cursor("x")[:-2]}, "cursor: is not a cursor this API gave"),
        ({"cursor": "eyJ4IjoxfQ"}, "cursor: is not a cursor this API gave"),  # {"x":1}
        ({"cursor": "W10"}, "cursor: is not a cursor this API gave"),  # []
        ({"cursor": "A" * 400}, "cursor: is not a cursor this API gave"),
        ({"queue": "no spaces"}, "queue: must be a queue name"),
        ({"kind": "a\u0000b"}, "kind: must be a kind's name"),
        ({"kind": "k" * 256}, "kind: must be a kind's name"),
    ],
)
def test_a_parameter_that_cannot_be_read_is_refused_by_name(client, params, named):
    assert refusal(client, **params).startswith(named)


def test_a_parameter_given_twice_is_refused_rather_than_one_picked(client):
    result = client.simulate_get(PATH, headers=AUTH, query_string="status=queued&status=failed")
    assert result.status_code == 400
    assert result.json["error"] == {
        "code": "invalid_option",
        "message": "status: give it at most once",
    }


def test_the_cursor_is_opaque_and_round_trips(system, client):
    for _ in range(3):
        system.runner.builtins.noop.enqueue(NoopPayload())
    page = listed(client, limit="2")
    last = page["jobs"][-1]["id"]
    assert last not in page["next_cursor"]
    assert set(page["next_cursor"]) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )  # safe in a query string as it is
    assert decode_cursor(page["next_cursor"]) == last


def test_a_cursor_past_the_oldest_job_gives_an_empty_last_page(system, client):
    system.runner.builtins.noop.enqueue(NoopPayload())
    before_everything = encode_cursor("0")
    assert listed(client, cursor=before_everything) == {"jobs": [], "next_cursor": None}


def test_times_in_the_list_are_not_shown_only_the_five_keys_and_the_state(system, client):
    system.runner.builtins.noop.enqueue(
        NoopPayload(), run_at=system.clock.now() + datetime.timedelta(days=1)
    )
    (job,) = listed(client)["jobs"]
    assert set(job) == {"id", "kind", "status", "result", "error", "state"}
    assert (job["status"], job["state"]) == ("queued", "scheduled")
