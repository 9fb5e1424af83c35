"""The shop's tasks: found by the worker in this installed app's ``tasks`` module."""

import asyncio

from django.tasks import task
from shop.models import Order


@task
def add(a: int, b: int) -> int:
    return a + b


@task(queue_name="mail")
def count_orders() -> int:
    return Order.objects.count()


class CardDeclined(Exception):
    pass


@task
def charge(card: str) -> None:
    raise CardDeclined(f"card {card} declined")


@task
async def fetch(url: str) -> dict:
    await asyncio.sleep(0)
    return {"url": url, "fetched": True}


@task(takes_context=True)
def which_attempt(context, label: str) -> dict:
    return {"label": label, "attempt": context.attempt, "id": context.task_result.id}


@task
def returns_a_set() -> object:
    return {1, 2}
