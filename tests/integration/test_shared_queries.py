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
    assert POSTGRES["promote_due"] == own.joinpath("promote_due.sql").read_text()
    assert "%(id)s" in POSTGRES["get_job"] and ":id" not in POSTGRES["get_job"]
    assert ":id" in SQLITE["get_job"]
    assert "SKIP LOCKED" in POSTGRES["promote_due"] and "SKIP LOCKED" not in SQLITE["promote_due"]
