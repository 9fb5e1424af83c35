"""What is done around every store call, written once: a wrapper that runs a hook around each.

Announcing changes (core/announcer.py), injecting faults (adapters/faulty.py) and observing
calls in tests are hooks; a new port method needs none of them changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from jobtable.core.ports import JobStore

T = TypeVar("T")


class Call:
    """One call of a store method: its name and the arguments it was given."""

    __slots__ = ("args", "kwargs", "method")

    def __init__(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.method = method
        self.args = args
        self.kwargs = kwargs

    def argument(self, position: int, name: str) -> Any:
        """The argument given at ``position``, or by ``name``."""
        return self.args[position] if len(self.args) > position else self.kwargs[name]


class StoreHook:
    """What to do around each call of a wrapped store; by default, nothing.

    A hook overrides ``before``, ``after``, or ``around`` (both at once, or instead of the
    call); ``hooks`` says which methods it cares for, so the others cost nothing.
    """

    def hooks(self, method: str) -> bool:
        """Whether calls of ``method`` go through this hook (default: every method)."""
        return True

    def before(self, call: Call) -> None:
        """Before the store runs ``call``; should this raise, the store is not called."""

    def after(self, call: Call, result: Any) -> None:
        """After the store returned ``result``; should this raise, the caller gets the error
        as from the store (as when a reply is lost after its commit)."""

    def around(self, call: Call, proceed: Callable[[], T]) -> T:
        """Run the store's method (``proceed``) with ``before`` and ``after`` around it."""
        self.before(call)
        result = proceed()
        self.after(call, result)
        return result


class AroundStore:
    """Every public method of ``inner`` called through ``hook``; every other attribute as is.

    Each method is wrapped at its first use, and the wrapper kept for later calls. The
    store's method is looked up on each call: as it is now (a test may patch it).
    """

    def __init__(self, inner: JobStore, hook: StoreHook) -> None:
        self.inner = inner
        self._hook = hook

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "_hook"):  # not set yet: never look them up on the store
            raise AttributeError(name)
        found = getattr(self.inner, name)
        if name.startswith("_") or not callable(found):
            return found
        wrapper = _wrap(self.inner, name, self._hook)
        wrapper.__name__ = name
        wrapper.__doc__ = found.__doc__
        self.__dict__[name] = wrapper
        return wrapper


def _wrap(inner: JobStore, name: str, hook: StoreHook) -> Callable[..., Any]:
    """The one wrapper of ``inner``'s method ``name``: no more than ``hook`` needs, as the
    hot path goes through it on every claim and outcome."""
    if not hook.hooks(name):

        def passed(*args: Any, **kwargs: Any) -> Any:
            return getattr(inner, name)(*args, **kwargs)

        return passed
    kind = type(hook)
    if kind.around is not StoreHook.around or kind.before is not StoreHook.before:

        def hooked(*args: Any, **kwargs: Any) -> Any:
            method = getattr(inner, name)
            return hook.around(Call(name, args, kwargs), lambda: method(*args, **kwargs))

        return hooked

    def followed(*args: Any, **kwargs: Any) -> Any:  # only ``after``: no closure per call
        result = getattr(inner, name)(*args, **kwargs)
        hook.after(Call(name, args, kwargs), result)
        return result

    return followed


def around(store: JobStore, hook: StoreHook) -> JobStore:
    """``store`` with ``hook`` run around each of its methods, typed as the port it wraps."""
    return cast(JobStore, AroundStore(store, hook))
