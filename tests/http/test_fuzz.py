"""Property-based fuzzing of the HTTP API and of payload decoding: 14,000 cases in all.

Random bodies (single jobs and batches, options and all), content types,
paths, methods, headers and tokens: never a 5xx, every error in the
envelope, a refused request stores nothing, and no refusal quotes a value.
Random JSON against a typed payload: a job id or InvalidPayloadError naming
fields, never another exception and never the submitted value.
"""

from __future__ import annotations

import json
import string

import attrs
import falcon.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.faulty import FaultyStore
from jobtable.adapters.memory import MemoryStore
from jobtable.core import InvalidPayloadError, JobContext, NoopPayload, Runner
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http.conditional import wait_preference

TOKEN = "fuzz-token-2b8e"
MARKER = "\u2603marker"
"""Put into every submitted string; it must never come back in an error."""
ASCII_MARKER = "xqzmarker"
"""The same, where only ASCII fits: paths, queries and header values."""


def mark(value):
    """Every string value (not key) prefixed with MARKER, to spot a value echoed back."""
    if isinstance(value, dict):
        return {key: mark(item) for key, item in value.items()}
    if isinstance(value, list):
        return [mark(item) for item in value]
    return MARKER + value if isinstance(value, str) else value


@attrs.frozen
class Line:
    sku: str
    quantity: int


@attrs.frozen
class Order:
    customer: str
    lines: list[Line]
    note: str | None = None
    rush: bool = False
    discount: float = 0.0


@attrs.frozen
class Nothing:
    def public(self) -> dict:
        return {}


def place(ctx: JobContext, payload: Order) -> Nothing:
    return Nothing()


def build():
    store = FaultyStore(MemoryStore(), rate=0.0)  # rate 0: it only counts calls
    runner = Runner(store, FakeClock())
    runner.kinds.register("order", place, payload=Order)
    app = create_app(runner, api_token=TOKEN, version="0.0.0")
    return store, runner, falcon.testing.TestClient(app)


STORE, RUNNER, CLIENT = build()
FINISHED = RUNNER.builtins.noop.enqueue(NoopPayload())
RUNNER.drain()  # a job whose stream ends: random reads of it never wait for it
FUZZ = settings(deadline=None, suppress_health_check=list(HealthCheck), database=None)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
orders = st.fixed_dictionaries(
    {"customer": st.text(max_size=10), "lines": st.lists(
        st.fixed_dictionaries({"sku": st.text(max_size=5), "quantity": st.integers()}), max_size=3)},
    optional={"note": st.none() | st.text(max_size=10), "rush": st.booleans(), "discount": st.floats()},
)  # fmt: skip
payloads = st.one_of(
    orders,
    json_values,
    st.dictionaries(st.sampled_from(["customer", "lines", "note", "rush", "extra"]), json_values),
)
bodies = st.one_of(
    st.builds(lambda kind, payload: json.dumps({"kind": kind, "payload": mark(payload)}).encode(),
              st.sampled_from(["order", "noop", "nope", ""]) | st.text(max_size=10), payloads),
    st.builds(lambda value: json.dumps(mark(value)).encode(), json_values),
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda text: (MARKER + text).encode()),
)  # fmt: skip
content_types = st.sampled_from(
    ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "text/plain",
     "application/x-www-form-urlencoded", "", "application/json-patch+json", "multipart/form-data"]
) | st.text(max_size=30)  # fmt: skip
authorizations = st.one_of(
    st.just(f"Bearer {TOKEN}"), st.just(f"Bearer {TOKEN}"), st.none(), st.text(max_size=40),
    st.builds(lambda t: f"Bearer {t}", st.text(alphabet=string.printable, max_size=40)),
)  # fmt: skip


def header_safe(value: str) -> bool:
    return all(32 <= ord(c) < 127 or c == "\t" for c in value)


def assert_answer_is_well_formed(result) -> None:
    assert result.status_code < 500, (result.status_code, result.text)
    if result.status_code >= 400 and result.content:
        body = result.json
        assert set(body) == {"error"}, body
        assert set(body["error"]) == {"code", "message"}, body
        assert all(isinstance(value, str) for value in body["error"].values())


@given(body=bodies, content_type=content_types, authorization=authorizations)
@settings(FUZZ, max_examples=3000)
def test_random_post_bodies_never_5xx_and_refusals_store_nothing(body, content_type, authorization):
    headers = {}
    if header_safe(content_type):
        headers["Content-Type"] = content_type
    if authorization is not None and header_safe(authorization):
        headers["Authorization"] = authorization
    before = STORE.calls["create"]
    result = CLIENT.simulate_post("/api/v1/jobs", body=body, headers=headers)
    assert_answer_is_well_formed(result)
    stored = STORE.calls["create"] - before
    if result.status_code == 202:
        assert stored == 1
        assert RUNNER.get(result.json["id"]) is not None
    else:
        assert stored == 0
        assert MARKER not in result.text


marked_strings = st.text(max_size=20).map(MARKER.__add__)
job_options = st.fixed_dictionaries(
    {},
    optional={
        "queue": st.sampled_from(["default", "slow", "no spaces", "", None]) | marked_strings,
        "priority": st.integers(-2, 12) | st.sampled_from([None, 2.5, True, "3"]) | marked_strings,
        "run_at": st.sampled_from(["2030-01-02T03:04:05Z", "2030-01-02T03:04:05", None,
                                   "9999-12-31T23:00:00-05:00", 1767225600]) | marked_strings,
        "delay": st.none() | st.integers(-5, 10**12) | st.floats() | marked_strings,
        "timeout": st.none() | st.integers(-5, 100) | st.floats() | marked_strings,
        "unique_key": st.none() | st.text(max_size=8) | marked_strings,
        "extra": json_values,
    },
)  # fmt: skip
batch_items = st.one_of(
    st.builds(lambda kind, payload, options: {"kind": kind, "payload": mark(payload), **mark(options)},
              st.sampled_from(["order", "noop", "nope"]) | st.text(max_size=10), payloads,
              job_options),
    json_values.map(mark),
)  # fmt: skip
batch_bodies = st.one_of(
    st.builds(lambda jobs: json.dumps({"jobs": jobs}).encode(), st.lists(batch_items, max_size=5)),
    st.builds(lambda value: json.dumps({"jobs": mark(value)}).encode(), json_values),
    st.builds(lambda value: json.dumps(mark(value)).encode(), json_values),
    st.binary(max_size=300),
)  # fmt: skip


@given(body=batch_bodies, authorization=authorizations)
@settings(FUZZ, max_examples=2000)
def test_random_batches_never_5xx_store_all_or_none_and_never_echo_a_value(body, authorization):
    headers = {"Content-Type": "application/json"}
    if authorization is not None and header_safe(authorization):
        headers["Authorization"] = authorization
    before = STORE.calls["create"]
    result = CLIENT.simulate_post("/api/v1/jobs/batch", body=body, headers=headers)
    assert_answer_is_well_formed(result)
    if result.status_code == 202:
        ids = result.json["ids"]
        assert len(ids) == len(json.loads(body)["jobs"])
        assert all(RUNNER.get(job_id) is not None for job_id in ids)
    else:
        assert STORE.calls["create"] == before
        assert MARKER not in result.text


path_segments = st.one_of(
    st.sampled_from(
        [
            "api",
            "v1",
            "jobs",
            "health",
            "openapi.json",
            "",
            "..",
            "%2e%2e",
            "%00",
            ASCII_MARKER,
            "events",
            "retry",
            "cancel",
            "detail",
            "batch",
            "queues",
        ]
    ),
    st.text(alphabet=string.ascii_letters + string.digits + "-._~%!$&'()*+,;=:@", max_size=12),
)


@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]),
    segments=st.lists(path_segments, min_size=1, max_size=6),
    query=st.text(alphabet=string.ascii_letters + "=&%+", max_size=20),
    # Content-Length and Transfer-Encoding are the server's (waitress) to refuse before the
    # app sees them; tests/e2e/test_cli_processes.py sends it malformed ones.
    headers=st.dictionaries(
        st.sampled_from(
            [
                "Accept",
                "If-None-Match",
                "Content-Type",
                "X-Forwarded-For",
                "Host",
                "Authorization",
                "Accept-Encoding",
            ]
        ),
        st.text(alphabet=string.printable.strip(), max_size=20).map(ASCII_MARKER.__add__),
        max_size=3,
    ),
    authorization=authorizations,
)
@settings(FUZZ, max_examples=3000)
def test_random_paths_methods_and_headers_never_5xx(
    method, segments, query, headers, authorization
):
    path = "/" + "/".join(segments)
    if authorization is not None and header_safe(authorization):
        headers = {**headers, "Authorization": authorization}
    before = STORE.calls["create"]
    result = CLIENT.simulate_request(
        method, path, query_string=ASCII_MARKER + query, headers=headers, body=b""
    )
    assert_answer_is_well_formed(result)
    assert ASCII_MARKER not in result.text
    if result.status_code != 202:
        assert STORE.calls["create"] == before


marked_text = st.text(alphabet=string.printable.strip(), max_size=30).map(ASCII_MARKER.__add__)
list_queries = st.dictionaries(
    st.sampled_from(["status", "kind", "queue", "limit", "cursor", "other"]),
    st.sampled_from(["", "queued", "failed", "noop", "default", "0", "-1", "500", "9" * 30,
                     "eyJhZnRlciI6IngifQ", "1.5", "\u00e9"]) | marked_text,
    max_size=4,
)  # fmt: skip
follow_headers = st.dictionaries(
    st.sampled_from(["If-None-Match", "Prefer", "Last-Event-ID"]),
    st.sampled_from(['"0"', '"2"', "*", 'W/"2"', '"2", "3"', "wait=0", "wait=abc", "wait=-1",
                     "respond-async, wait=0", "0", "2", "99", "", "1" * 30]) | marked_text,
    max_size=3,
)  # fmt: skip


@given(query=list_queries, authorization=authorizations)
@settings(FUZZ, max_examples=1000)
def test_random_list_queries_never_5xx_nor_echo_what_they_were_given(query, authorization):
    headers = {}
    if authorization is not None and header_safe(authorization):
        headers["Authorization"] = authorization
    result = CLIENT.simulate_get("/api/v1/jobs", params=query, headers=headers)
    assert_answer_is_well_formed(result)
    assert ASCII_MARKER not in result.text
    if result.status_code == 200:
        assert set(result.json) == {"jobs", "next_cursor"}


@given(
    route=st.sampled_from(["", "/events", "/detail"]),
    headers=follow_headers,
    last_event_id=st.none() | st.sampled_from(["1", "x", "-3"]) | marked_text,
)
@settings(FUZZ, max_examples=1000)
def test_random_conditional_and_resuming_reads_never_5xx(route, headers, last_event_id):
    if wait_preference(headers.get("Prefer")):
        del headers["Prefer"]  # a real wait on a finished job's own ETag: slow, not wrong
    query = {} if last_event_id is None else {"last_event_id": last_event_id}
    result = CLIENT.simulate_get(
        f"/api/v1/jobs/{FINISHED}{route}",
        params=query,
        headers={**headers, "Authorization": f"Bearer {TOKEN}"},
    )
    assert_answer_is_well_formed(result)
    assert ASCII_MARKER not in result.text
    assert result.status_code in (200, 204, 304, 400), (result.status_code, result.text)


@given(payload=payloads)
@settings(FUZZ, max_examples=4000)
def test_random_payloads_decode_or_name_their_problems_without_their_values(payload):
    marked = mark(payload)
    problems: tuple[str, ...] = ()
    try:
        job_id = RUNNER.enqueue("order", marked)
    except InvalidPayloadError as error:
        problems = error.problems
        assert problems, "a refusal names at least one problem"
    else:
        assert RUNNER.get(job_id).kind == "order"
    assert all(isinstance(problem, str) and MARKER not in problem for problem in problems)


def build_bulk():
    runner = Runner(MemoryStore(), FakeClock())
    runner.pause_queue("held")
    for _ in range(3):
        runner.builtins.noop.enqueue(NoopPayload(), queue="held")
    app = create_app(runner, api_token=TOKEN, version="0.0.0")
    return runner, falcon.testing.TestClient(app)


BULK_RUNNER, BULK_CLIENT = build_bulk()
ACCEPTED_BULK: list[object] = []
filter_values = (
    st.none()
    | st.sampled_from(["failed", "cancelled", "available", "running", "noop", "held",
                       "2030-01-02T03:04:05Z", "2030-01-02T03:04:05", "", "a b"])
    | json_values.map(mark)
)  # fmt: skip
bulk_bodies = st.fixed_dictionaries(
    {"filter": st.dictionaries(
        st.sampled_from(["state", "kind", "queue", "created_after", "created_before", "status"]),
        filter_values, max_size=4) | json_values.map(mark)},
    optional={"dry_run": st.booleans() | json_values.map(mark), "extra": json_values},
)  # fmt: skip


@given(action=st.sampled_from(["cancel", "retry"]), body=bulk_bodies, dry=st.booleans())
@settings(FUZZ, max_examples=1000)
def test_random_bulk_requests_never_5xx_echo_nothing_and_a_refusal_changes_nothing(
    action, body, dry
):
    if dry and isinstance(body, dict) and "dry_run" not in body:
        body = {**body, "dry_run": True}
    before = [(job.id, job.state) for job in BULK_RUNNER.list_jobs(limit=10).jobs]
    result = BULK_CLIENT.simulate_post(
        f"/api/v1/jobs/{action}",
        body=json.dumps(body),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    assert_answer_is_well_formed(result)
    assert MARKER not in result.text
    if result.status_code == 200:
        ACCEPTED_BULK.append(body)
    after = [(job.id, job.state) for job in BULK_RUNNER.list_jobs(limit=10).jobs]
    if result.status_code == 200:
        assert set(result.json) == {"matched", "changed"}
        assert 0 <= result.json["changed"] <= result.json["matched"]
        if body.get("dry_run") is True:
            assert after == before
    else:
        assert result.status_code == 400, result.text
        assert after == before


def test_the_bulk_fuzzing_reached_the_actions_not_only_refusals():
    test_random_bulk_requests_never_5xx_echo_nothing_and_a_refusal_changes_nothing()
    assert len(ACCEPTED_BULK) >= 50
