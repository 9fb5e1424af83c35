"""Read Server-Sent Events: a whole body at once, or a live connection event by event."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterable

import attrs

SLOTS_FULL = {
    "error": {"code": "unavailable", "message": "every stream slot is in use; try again shortly"}
}
"""What a stream or long-poll is answered (503) when every stream slot is in use."""


@attrs.frozen
class Event:
    id: int
    kind: str
    job: dict


class EventReader:
    """Turns lines into events as the format says; counts comments, keeps ``retry``."""

    def __init__(self) -> None:
        self.comments = 0
        self.retry: int | None = None
        self._fields: dict[str, str] = {}

    def feed(self, line: str) -> Event | None:
        """One line (without its end); the event it completes, if any."""
        if line == "":
            fields, self._fields = self._fields, {}
            if "data" not in fields:
                return None  # a block of retry: alone dispatches nothing
            return Event(id=int(fields["id"]), kind=fields["event"], job=json.loads(fields["data"]))
        if line.startswith(":"):
            self.comments += 1
            return None
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "retry":
            self.retry = int(value)
        else:
            assert field not in self._fields, f"{field} twice in one event"
            self._fields[field] = value
        return None


def parse(body: str) -> tuple[list[Event], EventReader]:
    reader = EventReader()
    events = [event for line in body.split("\n") if (event := reader.feed(line))]
    return events, reader


class LiveStream:
    """One connection to an event stream, read as the server writes it."""

    def __init__(
        self, address: tuple[str, int], path: str, headers: dict[str, str], timeout: float = 30
    ) -> None:
        self.connection = http.client.HTTPConnection(*address, timeout=timeout)
        self.connection.request("GET", path, headers=headers)
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.reader = EventReader()

    def next(self) -> Event | None:
        """The next event, waiting for it; None once the stream has ended."""
        while True:
            line = self.response.readline()
            if not line:
                return None
            assert line.endswith(b"\n"), line
            event = self.reader.feed(line[:-1].decode("utf-8"))
            if event is not None:
                return event

    def take(self, count: int) -> list[Event]:
        events = []
        for _ in range(count):
            event = self.next()
            assert event is not None, f"the stream ended after {events}"
            events.append(event)
        return events

    def rest(self) -> list[Event]:
        """Every event until the stream ends."""
        events = []
        while (event := self.next()) is not None:
            events.append(event)
        return events

    def close(self) -> None:
        self.connection.close()


def ids(events: Iterable[Event]) -> list[int]:
    return [event.id for event in events]
