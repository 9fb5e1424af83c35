"""Pure policies: claim-retry backoff, failure codes, ids and the payload codec."""

from __future__ import annotations

import uuid

import attrs
import pytest

from jobtable.core import codec
from jobtable.core.backoff import next_claim_retry_delay
from jobtable.core.codes import (
    INTERNAL_ERROR,
    INTERRUPTED,
    UNKNOWN_KIND,
    InvalidFailureCodeError,
    stored_code,
    validate_declared_codes,
)
from jobtable.core.ids import JobIdGenerator


def test_claim_retry_starts_at_50ms_and_doubles_to_5s():
    delays, delay = [], None
    for _ in range(10):
        delay = next_claim_retry_delay(delay)
        delays.append(delay)
    assert delays == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])


def test_claim_retry_knobs_are_keyword_only_and_respected():
    assert next_claim_retry_delay(None, initial=1.0, maximum=3.0) == 1.0
    assert next_claim_retry_delay(2.0, initial=1.0, maximum=3.0) == 3.0
    with pytest.raises(TypeError):
        next_claim_retry_delay(None, 1.0)  # type: ignore[misc]


@pytest.mark.parametrize("code", ["a", "quota_exceeded", "no_regulars2", "a" * 64])
def test_well_formed_codes_may_be_declared(code):
    assert validate_declared_codes([code]) == {code}


@pytest.mark.parametrize(
    "code",
    ["", "Bad Code", "sk-sentinel", "1abc", "_x", "a" * 65, "caf\u00e9", INTERNAL_ERROR,
     UNKNOWN_KIND, INTERRUPTED, None, 3],
)  # fmt: skip
def test_malformed_and_reserved_codes_are_refused(code):
    with pytest.raises(InvalidFailureCodeError):
        validate_declared_codes([code])


def test_a_single_string_is_not_taken_for_a_list_of_codes():
    with pytest.raises(InvalidFailureCodeError, match="list"):
        validate_declared_codes("quota")


def test_an_undeclared_code_is_stored_as_internal_error():
    declared = frozenset({"quota_exceeded"})
    assert stored_code("quota_exceeded", declared=declared) == "quota_exceeded"
    assert stored_code("other", declared=declared) == INTERNAL_ERROR


def test_ids_are_uuid7_and_strictly_increasing_within_one_millisecond():
    ids = JobIdGenerator()
    made = [ids.next_id(1_767_225_600_000) for _ in range(5000)]
    assert made == sorted(made) and len(set(made)) == len(made)
    parsed = uuid.UUID(made[0])
    assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
    assert int(parsed.hex[:12], 16) == 1_767_225_600_000


def test_ids_keep_increasing_when_the_clock_steps_back():
    ids = JobIdGenerator()
    later = ids.next_id(2_000_000_000_000)
    earlier = ids.next_id(1_000_000_000_000)
    assert earlier > later


def test_ids_sort_by_creation_time_across_milliseconds():
    ids = JobIdGenerator()
    assert ids.next_id(1_000) < ids.next_id(1_001) < ids.next_id(65_536)


@attrs.frozen
class Address:
    city: str


@attrs.frozen
class Order:
    quantity: int
    price: float
    gift: bool
    ship_to: Address
    note: str = ""


@pytest.fixture
def converter():
    return codec.make_converter()


def test_a_payload_decodes_into_its_type(converter):
    text = '{"quantity":2,"price":3,"gift":false,"ship_to":{"city":"Oslo"}}'
    order = codec.decode_payload(converter, text, Order)
    assert order == Order(quantity=2, price=3.0, gift=False, ship_to=Address(city="Oslo"))
    assert type(order.price) is float


@pytest.mark.parametrize(
    "text",
    [
        '{"quantity":2,"price":3,"gift":false,"ship_to":{"city":"Oslo"},"extra":1}',
        '{"quantity":2,"price":3,"gift":false,"ship_to":{"city":"Oslo","zip":"1"}}',
        '{"quantity":"2","price":3,"gift":false,"ship_to":{"city":"Oslo"}}',
        '{"quantity":true,"price":3,"gift":false,"ship_to":{"city":"Oslo"}}',
        '{"quantity":2.5,"price":3,"gift":false,"ship_to":{"city":"Oslo"}}',
        '{"quantity":2,"price":"3","gift":false,"ship_to":{"city":"Oslo"}}',
        '{"quantity":2,"price":3,"gift":1,"ship_to":{"city":"Oslo"}}',
        '{"quantity":2,"price":3,"gift":false,"ship_to":{"city":7}}',
        '{"quantity":2,"price":3,"gift":false}',
        "[1,2]",
        "not json",
    ],
)
def test_payloads_are_decoded_strictly(converter, text):
    with pytest.raises(codec.PayloadDecodeError):
        codec.decode_payload(converter, text, Order)


def test_a_payload_encodes_as_compact_json(converter):
    order = Order(quantity=1, price=2.5, gift=True, ship_to=Address(city="Oslo"))
    text = codec.encode_payload(converter, order)
    assert text == '{"quantity":1,"price":2.5,"gift":true,"ship_to":{"city":"Oslo"},"note":""}'
    assert codec.decode_payload(converter, text, Order) == order


class Public:
    def __init__(self, value):
        self.value = value

    def public(self):
        return self.value


def test_only_the_public_value_of_a_result_is_encoded():
    assert codec.encode_public(Public({"ok": True, "n": [1, 2]})) == '{"ok":true,"n":[1,2]}'


@pytest.mark.parametrize("value", [float("nan"), {1, 2}, object(), {"x": float("inf")}])
def test_a_public_value_that_is_not_json_does_not_encode(value):
    with pytest.raises(codec.ResultEncodeError):
        codec.encode_public(Public(value))


def test_a_result_without_public_does_not_encode():
    with pytest.raises(codec.ResultEncodeError):
        codec.encode_public({"ok": True})
