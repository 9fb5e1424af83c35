"""``manage.py migrate`` brings jobtable's own tables up to date in Django's database (when a
task backend shares it), as ``jobtable migrate`` would: a first enqueue inside
``transaction.atomic()`` then never has to make them under Django's write lock."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def jobtable_tables(apps: Any, schema_editor: Any) -> None:
    from jobtable.contrib.django.databases import bring_up_to_date

    bring_up_to_date(schema_editor.connection.alias)


class Migration(migrations.Migration):
    atomic = False  # jobtable migrates on a connection of its own, outside Django's transaction
    dependencies: list[tuple[str, str]] = []
    operations = [migrations.RunPython(jobtable_tables, migrations.RunPython.noop)]
