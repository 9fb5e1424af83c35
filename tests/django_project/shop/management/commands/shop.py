"""The test's driver: ``manage.py shop enqueue`` enqueues every case and prints their ids
as JSON; ``manage.py shop results ID...`` prints what ``get_result`` says of each."""

import asyncio
import datetime
import json
import threading

from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.tasks import task_backends
from django.utils import timezone
from elsewhere_tasks import nobody_runs_me
from extra_tasks import shout
from shop.models import Order
from shop.tasks import add, charge, count_orders, fetch, returns_a_set, which_attempt


class RolledBack(Exception):
    pass


class Command(BaseCommand):
    def add_arguments(self, parser):
        parser.add_argument("action")
        parser.add_argument("ids", nargs="*")

    def handle(self, *args, **options):
        if options["action"] == "enqueue":
            print(json.dumps(enqueue()))
        elif options["action"] == "enqueue-in-atomic":
            try:
                with transaction.atomic():
                    Order.objects.create(item="book")
                    add.enqueue(1, 2)
            except RuntimeError as error:
                print(json.dumps({"refused": str(error)}))
        else:
            print(json.dumps([describe(add.get_backend().get_result(i)) for i in options["ids"]]))


def enqueue():
    ids = {}
    with transaction.atomic():  # the first enqueue of the process, after a write of Django's
        Order.objects.create(item="book")
        ids["committed"] = count_orders.enqueue().id

    def in_another_thread():  # a backend of its own (Django keeps one per thread)
        with transaction.atomic():
            Order.objects.create(item="pen")
            ids["other_thread"] = add.enqueue(20, 22).id
        connection.close()

    thread = threading.Thread(target=in_another_thread)
    thread.start()
    thread.join()
    ids["plain"] = add.enqueue(2, 3).id
    try:
        with transaction.atomic():
            Order.objects.create(item="lost")
            ids["rolled_back"] = add.enqueue(1, 1).id
            raise RolledBack
    except RolledBack:
        pass
    ids["failed"] = charge.enqueue("4242-4242").id
    ids["async"] = asyncio.run(fetch.aenqueue("https://example.com")).id
    ids["extra"] = shout.enqueue("hi").id
    ids["context"] = which_attempt.using(priority=100).enqueue(label="ctx").id
    ids["bad_return"] = returns_a_set.enqueue().id
    ids["unregistered"] = nobody_runs_me.enqueue().id
    later = timezone.now() + datetime.timedelta(hours=1)
    ids["later"] = add.using(run_after=later, priority=-100).enqueue(0, 0).id
    try:
        add.enqueue({1, 2}, 3)
        ids["not_json"] = "stored"
    except TypeError as error:
        ids["not_json"] = str(error)
    ids["async_result"] = describe(asyncio.run(add.aget_result(ids["plain"])))
    ids["backend"] = type(task_backends["default"]).__name__
    return ids


def describe(result):
    return {
        "id": result.id,
        "task": result.task.module_path,
        "status": str(result.status),
        "return_value": result.return_value if result.status == "SUCCESSFUL" else None,
        "errors": [[e.exception_class_path, e.traceback] for e in result.errors],
        "attempts": result.attempts,
        "worker_ids": result.worker_ids,
        "args": result.args,
        "kwargs": result.kwargs,
        "enqueued": result.enqueued_at is not None,
        "started": result.started_at is not None,
        "finished": result.finished_at is not None,
    }
