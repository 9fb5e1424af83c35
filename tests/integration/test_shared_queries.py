"""The shared SQL files, put into each engine's placeholder style."""

from __future__ import annotations

import importlib.resources

from jobtable.adapters.postgres.engine import QUERIES as POSTGRES
from jobtable.adapters.sql.queries import Placeholders, in_style
from jobtable.adapters.sqlite.engine import QUERIES as SQLITE


def test_named_parameters_become_psycopgs_outside_literals_comments_and_casts():
    sql = (
        "-- :ignored 10%\n"
        "SELECT ':literal', '50%', 'it''s :here', value::text FROM t\n"
        "WHERE a = :a AND b LIKE 'x%' AND c = :c_2 -- :also_ignored\n"
    )
    assert in_style(sql, Placeholders.PYFORMAT) == (
        "-- :ignored 10%%\n"
        "SELECT ':literal', '50%%', 'it''s :here', value::text FROM t\n"
        "WHERE a = %(a)s AND b LIKE 'x%%' AND c = %(c_2)s -- :also_ignored\n"
    )
    assert in_style(sql, Placeholders.NAMED) == sql


def test_an_engine_runs_its_own_file_where_it_has_one_and_the_shared_one_otherwise():
    own = importlib.resources.files("jobtable.adapters.postgres").joinpath("queries")
    assert "unnest(:kinds::text[])" in own.joinpath("_pick_next.sql").read_text()
    assert "unnest(%(kinds)s::text[])" in POSTGRES["claim_next_job"]
    assert "json_each(:kinds)" in SQLITE["claim_next_job"]
    assert "%(id)s" in POSTGRES["get_job"] and ":id" not in POSTGRES["get_job"]
    assert ":id" in SQLITE["get_job"]


def test_a_fragment_is_the_engines_own_else_the_shared_one_without_its_comments():
    # promote_due is shared; its {{skip_locked}} is each engine's own fragment.
    assert "SKIP LOCKED" in POSTGRES["promote_due"] and "SKIP LOCKED" not in SQLITE["promote_due"]
    assert "{{" not in POSTGRES["promote_due"] and "{{" not in SQLITE["promote_due"]
    assert "one writer at a time" not in SQLITE["promote_due"]  # the fragment's comment
    # _holds_unique_key is shared: the same predicate in each engine, placeholders aside.
    for queries in (POSTGRES, SQLITE):
        assert "NOT unique_while_active" in queries["unique_key_holder"]
        assert "NOT unique_while_active" in queries["create_job"]
    # A fragment inside a fragment: retry's {{key_held_by_another}} holds {{holds_unique_key}}.
    assert "holder.unique_key = jobs.unique_key" in POSTGRES["retry_failed_job"]
    assert "status IN ('queued', 'scheduled', 'running')" in POSTGRES["retry_failed_job"]


def test_the_unique_index_has_the_predicate_the_statements_name():
    """ON CONFLICT finds a partial index only by its predicate, so the migration's must be
    the shared fragment's, word for word (spacing aside)."""
    predicate = " ".join(SQLITE["unique_key_holder"].split(" AND ", 2)[2].split())
    for engine in ("sqlite", "postgres"):
        migration = (
            importlib.resources.files("jobtable.migrations")
            .joinpath(engine, "0009_unique_while_unfinished.sql")
            .read_text()
        )
        body = " ".join(line for line in migration.splitlines() if not line.startswith("--"))
        assert predicate in " ".join(body.replace("( ", "(").split()), engine
