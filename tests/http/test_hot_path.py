"""What the request path's shortcuts must not change: the depth limit at its edge, HTML-safe
bodies, the token on a path spelled with repeated slashes, a job without options."""

from __future__ import annotations

import json

import pytest

from jobtable.entrypoints.http import json_text
from tests.http.conftest import AUTH
from tests.http.test_post_jobs import draft_system, jobs_stored, post  # noqa: F401


def _order_with_note_nested(levels: int) -> str:
    """An order whose note is ``levels`` arrays deep around a number: with the body's own
    object and the payload's, the number sits ``levels + 3`` deep."""
    return '{"kind":"order","payload":{"note":' + "[" * levels + "1" + "]" * levels + "}}"


def test_the_depth_limit_counts_a_value_inside_the_last_bracket(draft_system, client):  # noqa: F811
    # 64 levels deep: within the limit, so refused only for its payload (note is a string).
    within = post(client, _order_with_note_nested(61))
    assert within.json["error"]["code"] == "invalid_payload"
    # 65 deep with 64 brackets: the walk must run, and refuse it.
    past = post(client, _order_with_note_nested(62))
    assert past.json == {
        "error": {"code": "invalid_request", "message": "request body is nested too deeply"}
    }
    assert jobs_stored(draft_system) == 0


@pytest.mark.parametrize("text", ["<b>", "a>b", "fish & chips", "line\u2028sep", "para\u2029sep"])
def test_every_body_is_html_safe_whichever_character_it_holds(text):
    encoded = json_text.dumps({"note": text})
    assert not set("<>&\u2028\u2029") & set(encoded)
    assert json.loads(encoded) == {"note": text}


def test_a_body_without_markup_is_plain_compact_json():
    assert json_text.dumps({"id": "x", "n": [1, 2.5, None, True], "é": "ü"}) == (
        '{"id":"x","n":[1,2.5,null,true],"é":"ü"}'
    )


def test_an_api_path_with_repeated_slashes_still_needs_the_token(client):
    refused = client.simulate_get("//api//v1//jobs")
    assert refused.status_code == 401
    assert client.simulate_get("/api/v1/jobs", headers=AUTH).status_code == 200


def test_a_job_without_options_takes_its_kinds_defaults_and_bad_options_are_refused(
    draft_system,  # noqa: F811
    client,
):
    accepted = post(client, '{"kind":"order","payload":{"quantity":1},"priority":null}')
    assert accepted.status_code == 202
    row = draft_system.store.row(accepted.json["id"])
    assert (row["queue"], row["priority"]) == ("default", 0)
    refused = post(client, '{"kind":"order","payload":{"quantity":1},"priority":10}')
    assert refused.json["error"]["code"] == "invalid_option"
