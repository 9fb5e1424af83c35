"""Event streams held open through a load: one per job, each job due in a day.

Opened before the load (each must show the job queued), they must stay open
through it; released after (the job cancelled), each must deliver the job's
end and end. Opened before a SIGTERM, each must end cleanly (no event, no
error) once the server stops. (Jobs due later rather than in a paused queue:
a paused queue's jobs slow the claims of their kind, and the load's workers
claim the same kind.)
"""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import attrs

from tests.e2e.conftest import ServeProcess
from tests.support.sse import LiveStream, ids


@attrs.define
class HeldStreams:
    server: ServeProcess
    streams: list[LiveStream] = attrs.Factory(list)
    jobs: list[str] = attrs.Factory(list)
    errors: list[str] = attrs.Factory(list)
    finished: int = 0
    """Streams that delivered what their end asked for."""

    @classmethod
    def open(cls, server: ServeProcess, count: int) -> HeldStreams:
        held = cls(server)
        address = urlsplit(server.base_url)
        headers = {"Authorization": f"Bearer {server.token}"}
        for _ in range(count):
            job = held._request("/api/v1/jobs", {"kind": "noop", "payload": {}, "delay": 86400})
            stream = LiveStream(
                (str(address.hostname), int(address.port or 80)),
                f"/api/v1/jobs/{job['id']}/events",
                headers,
                timeout=120,
            )
            held.streams.append(stream)
            held.jobs.append(job["id"])
            first = stream.next() if stream.status == 200 else None
            if first is None or first.id != 0:
                held.errors.append(f"stream opened with {stream.status}, first {first}")
        return held

    def release(self) -> None:
        """Cancel every job: every stream must tell of it and end."""
        for job_id in self.jobs:
            self._request(f"/api/v1/jobs/{job_id}/cancel", {})
        self._read_each(lambda events: ids(events) == [1]
                        and events[-1].job["error"] == "cancelled")  # fmt: skip

    def expect_ended(self) -> None:
        """After a stop: every stream ended with nothing more (its server ended it)."""
        self._read_each(lambda events: events == [])

    def _read_each(self, wanted) -> None:
        lock = threading.Lock()

        def read(stream: LiveStream) -> None:
            try:
                events = stream.rest()
            except Exception as error:
                outcome = f"stream: {type(error).__name__}"
            else:
                outcome = None if wanted(events) else f"stream: {ids(events)}"
            finally:
                stream.close()
            with lock:
                if outcome is None:
                    self.finished += 1
                else:
                    self.errors.append(outcome)

        threads = [threading.Thread(target=read, args=(stream,)) for stream in self.streams]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)

    def _request(self, path: str, body: dict) -> dict:
        status, answer = self.server.request(path, body=body)
        if status not in (200, 202):
            self.errors.append(f"{path}: {status}")
        return answer
