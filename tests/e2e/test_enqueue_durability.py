"""kill -9 of ``jobtable serve`` at random moments in a stream of POSTs: every job that got a
202 exists after the restart, on SQLite (synchronous=full, the default) and on PostgreSQL."""

from __future__ import annotations

import http.client
import json
import random
import signal
import threading
from urllib.parse import urlsplit

import pytest

from tests.support.databases import query
from tests.support.seeds import chosen_seed

pytestmark = pytest.mark.e2e
ROUNDS = 3
CLIENTS = 4


def post_until_refused(base_url: str, token: str, accepted: list[str], stop: threading.Event):
    """POST noop jobs on one keep-alive connection until the server is gone."""
    address = urlsplit(base_url)
    conn = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        while not stop.is_set():
            conn.request(
                "POST", "/api/v1/jobs", body=b'{"kind":"noop","payload":{}}', headers=headers
            )
            response = conn.getresponse()
            body = response.read()
            if response.status == 202:
                accepted.append(json.loads(body)["id"])
    except (OSError, http.client.HTTPException):
        return  # the server died mid-exchange: this request was never acknowledged
    finally:
        conn.close()


def test_every_acknowledged_post_survives_kill_9_of_serve(database, tmp_path, serve_processes):
    chance = random.Random(chosen_seed("enqueue durability"))
    accepted: list[str] = []
    env = {"JOBTABLE_DATABASE": database, "JOBTABLE_API_TOKEN": "durability-token"}
    for _ in range(ROUNDS):
        server = serve_processes(database, env=env)
        stop = threading.Event()
        round_accepted: list[str] = []
        clients = [
            threading.Thread(target=post_until_refused, args=(server.base_url, server.token, round_accepted, stop))
            for _ in range(CLIENTS)
        ]  # fmt: skip
        for client in clients:
            client.start()
        stop.wait(
            chance.uniform(0.3, 1.5)
        )  # a random moment into the stream, not a wait for a result
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(10)
        stop.set()
        for client in clients:
            client.join(15)
        assert round_accepted, "no POST was accepted before the kill"
        accepted += round_accepted

    server = serve_processes(database, env=env)
    try:
        stored = {job_id for (job_id,) in query(database, "SELECT id FROM jobs")}
        missing = set(accepted) - stored
        print(f"{len(accepted)} acknowledged jobs over {ROUNDS} kills, {len(stored)} stored")
        assert not missing, f"{len(missing)} acknowledged jobs lost"
        sample = chance.sample(accepted, 5)
        for job_id in sample:
            assert server.request(f"/api/v1/jobs/{job_id}")[0] == 200
    finally:
        assert server.stop() == 0
