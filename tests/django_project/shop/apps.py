"""The shop app; its ready() records Django's task signals, one JSON line each, to the file
``DJANGO_TEST_SIGNALS`` names (the enqueuing process's and the workers' alike)."""

import json
import os

from django.apps import AppConfig


class ShopConfig(AppConfig):
    name = "shop"

    def ready(self) -> None:
        from django.tasks.signals import task_enqueued, task_finished, task_started

        path = os.environ.get("DJANGO_TEST_SIGNALS")
        if not path:
            return

        def recorder(name):
            def record(sender, task_result, **kwargs):
                line = {
                    "signal": name,
                    "id": task_result.id,
                    "task": task_result.task.module_path,
                    "status": str(task_result.status),
                    "pid": os.getpid(),
                    "sender": sender.__name__,
                    "errors": [e.exception_class_path for e in task_result.errors],
                }
                with open(path, "a", encoding="utf-8") as out:
                    out.write(json.dumps(line) + "\n")

            return record

        for name, signal in (
            ("enqueued", task_enqueued),
            ("started", task_started),
            ("finished", task_finished),
        ):
            signal.connect(recorder(name), weak=False)
