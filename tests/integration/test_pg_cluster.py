"""The private-cluster helpers do what tests that stop, fail over or pool a server rely on.

Each test gets servers of its own (tests/support/pg_cluster.py), never the
shared one on port 5432: stopping them disturbs no other test.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.support.pg_cluster import (
    SHARED_PORT,
    PgBouncer,
    PrivateCluster,
    pgbouncer_for,
    primary_and_standby,
    private_cluster,
    temp_folder,
)


@pytest.fixture
def cluster() -> Iterator[PrivateCluster]:
    with private_cluster() as running:
        yield running


@pytest.fixture
def bouncer(cluster: PrivateCluster) -> Iterator[PgBouncer]:
    with pgbouncer_for(cluster) as running:
        yield running


def rows(url: str, sql: str, **kwargs: object) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True, connect_timeout=5, **kwargs) as conn:
        return [tuple(row) for row in conn.execute(sql).fetchall()]


def test_a_private_cluster_stops_and_starts_again_with_its_data_and_is_gone_after():
    with temp_folder() as folder:
        with PrivateCluster.create(folder / "primary") as cluster:
            assert cluster.port != SHARED_PORT
            assert cluster.url == f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
            assert rows(
                cluster.url_for("test"), "SELECT current_database(), inet_server_port()"
            ) == [("test", cluster.port)]
            with cluster.connect("test") as conn:
                conn.execute("CREATE TABLE kept (value text)")
                conn.execute("INSERT INTO kept VALUES ('before the stop')")

            cluster.stop()
            assert not cluster.is_running()
            with pytest.raises(psycopg.OperationalError):
                rows(cluster.url_for("test"), "SELECT 1")

            cluster.start()
            assert rows(cluster.url_for("test"), "SELECT value FROM kept") == [("before the stop",)]
            cluster.restart()
            assert rows(cluster.url_for("test"), "SELECT value FROM kept") == [("before the stop",)]
            data = cluster.folder

        assert not cluster.is_running()
        assert not cluster.accepts_connections()
        assert not data.exists()


def test_a_standby_streams_and_takes_writes_once_promoted_after_the_primary_stops():
    with primary_and_standby() as (primary, standby):
        assert standby.port not in (primary.port, SHARED_PORT)
        assert standby.in_recovery()
        with primary.connect("test") as conn:
            conn.execute("CREATE TABLE events (id int PRIMARY KEY, note text)")
            conn.execute("INSERT INTO events VALUES (1, 'written on the primary')")
        standby.wait_caught_up(primary)
        assert rows(standby.url_for("test"), "SELECT id, note FROM events") == [
            (1, "written on the primary")
        ]
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            rows(standby.url_for("test"), "INSERT INTO events VALUES (2, 'refused')")

        primary.stop("fast")
        standby.promote()

        assert not standby.in_recovery()
        with standby.connect("test") as conn:
            conn.execute("INSERT INTO events VALUES (2, 'written after the failover')")
        assert rows(standby.url_for("test"), "SELECT id FROM events ORDER BY id") == [(1,), (2,)]


def test_queries_work_through_pgbouncer_in_transaction_mode(cluster, bouncer):
    assert bouncer.port not in (cluster.port, SHARED_PORT)
    with psycopg.connect(
        bouncer.url_for("test"), prepare_threshold=None, connect_timeout=5
    ) as conn:
        assert conn.execute("SELECT current_database(), inet_server_port()").fetchone() == (
            "test",
            cluster.port,
        )
        conn.execute("CREATE TABLE pooled (n int)")
        # The same parameterized statement many times: psycopg would prepare it
        # from the fifth run on, which PgBouncer 1.18 in transaction mode breaks.
        for n in range(10):
            conn.execute("INSERT INTO pooled VALUES (%s)", (n,))
        conn.commit()
        assert conn.execute("SELECT count(*), sum(n) FROM pooled").fetchone() == (10, 45)
    # The pool for ``test`` exists once a client used it, in the mode asked for.
    assert ("test", "transaction") in [(pool[0], pool[-1]) for pool in bouncer.admin("SHOW POOLS")]


def test_pgbouncer_follows_a_failover_when_retargeted():
    with primary_and_standby() as (primary, standby), pgbouncer_for(primary) as bouncer:
        url = bouncer.url_for("test")
        assert rows(url, "SELECT inet_server_port()", prepare_threshold=None) == [(primary.port,)]

        primary.stop("fast")
        standby.promote()
        bouncer.retarget(standby)

        assert rows(
            url, "SELECT inet_server_port(), pg_is_in_recovery()", prepare_threshold=None
        ) == [(standby.port, False)]
