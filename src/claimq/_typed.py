"""Typed task arguments: a handler parameter annotated with a pydantic model or a dataclass (or
a type holding them: `list[Item]`, `Item | None`, `dict[str, Model]`) is validated and dumped
to JSON at enqueue (bad arguments raise InvalidInput before anything is written) and rebuilt
from the payload in the worker. pydantic is optional: without it, a parameter typed with a
dataclass (or an optional one) is built from its fields as given, unchecked; other typed
parameters are refused at registration."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from claimq.errors import InvalidInput, Permanent


class _Converter:
    """One typed parameter: `dump` (value -> JSON-ready), `load` (JSON -> value). With pydantic,
    a TypeAdapter of the whole annotation (`Model`, `list[Item]`, `Item | None`, …); without
    it, a dataclass (or an optional one) built from its fields."""

    __slots__ = ("adapter", "cls", "label", "optional")

    def __init__(self, hint: Any, adapter: Any) -> None:
        self.adapter = adapter
        self.cls, self.optional = _unwrap(hint)
        self.label = getattr(hint, "__name__", None) if isinstance(hint, type) else None
        self.label = self.label or str(hint).replace("typing.", "")

    def load(self, value: Any) -> Any:
        if self.adapter is not None:
            return self.adapter.validate_python(value)
        if value is None and self.optional or isinstance(value, self.cls):  # type: ignore[arg-type]
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping of its fields, got {type(value).__name__}")
        return self.cls(**value)  # type: ignore[misc]

    def dump(self, value: Any) -> Any:
        obj = self.load(value)
        if self.adapter is not None:
            return self.adapter.dump_python(obj, mode="json")
        return None if obj is None else dataclasses.asdict(obj)


class Arguments:
    """The typed parameters of one handler."""

    def __init__(self, fn: Callable[..., Any], converters: dict[str, _Converter],
                 skip_first: bool) -> None:
        self.signature = inspect.signature(fn)
        self.converters = converters
        self.skip_first = skip_first

    def dump(self, payload: Mapping[str, Any] | None, *, partial: bool = False) -> dict[str, Any]:
        """The payload to store: typed arguments validated and dumped. Unless `partial`, the
        arguments must also fit the handler's parameters."""
        payload = dict(payload or {})
        if not partial:
            try:
                self.signature.bind(*((None,) if self.skip_first else ()), **payload)
            except TypeError as exc:
                raise InvalidInput(f"arguments do not fit the handler's parameters: {exc}"
                                   ) from None
        return self._convert(payload, "dump", InvalidInput, "argument")

    def load(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The handler's keyword arguments rebuilt from a payload (a bad one: Permanent, as
        retrying cannot help)."""
        return self._convert(dict(kwargs), "load", Permanent, "payload argument")

    def _convert(self, values: dict[str, Any], how: str, error: type[Exception],
                 what: str) -> dict[str, Any]:
        for name, conv in self.converters.items():
            if name in values:
                try:
                    values[name] = getattr(conv, how)(values[name])
                except (ValueError, TypeError) as exc:
                    raise error(f"{what} {name!r} is not a valid {conv.label}: {exc}"
                                ) from None
        return values


def arguments(fn: Callable[..., Any], skip_first: bool) -> Arguments | None:
    """The handler's typed parameters, or None when it has none (the common case)."""
    hints = _hints(fn)
    params = list(inspect.signature(fn).parameters.values())[1 if skip_first else 0:]
    converters = {}
    for param in params:
        hint = hints.get(param.name)
        if hint is None or not _mentions_typed(hint):
            continue
        adapter = _adapter(hint)
        cls, _ = _unwrap(hint)
        if adapter is None and (cls is None or not dataclasses.is_dataclass(cls)):
            raise InvalidInput(f"parameter {param.name!r} ({hint}) needs pydantic: "
                               "pip install 'claimq[pydantic]'")
        converters[param.name] = _Converter(hint, adapter)
    return Arguments(fn, converters, skip_first) if converters else None


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotations: by the module's names, then also those the function closes
    over (a model defined in a function, under `from __future__ import annotations`), else
    those already classes."""
    for localns in (None, "closure"):
        try:
            names = inspect.getclosurevars(fn).nonlocals if localns else None
            return typing.get_type_hints(fn, localns=names)
        except Exception:  # noqa: BLE001, S112 - a name that cannot be resolved: try the next
            continue
    return {k: v for k, v in getattr(fn, "__annotations__", {}).items() if isinstance(v, type)}


def _adapter(hint: Any) -> Any:
    try:
        from pydantic import TypeAdapter
    except ImportError:
        return None
    return TypeAdapter(hint)


def _mentions_typed(hint: Any) -> bool:
    """Whether the annotation is, or holds (list[...], X | None, dict[str, ...]), a pydantic
    model or a dataclass."""
    if isinstance(hint, type) and typing.get_origin(hint) is None:
        return _typed_class(hint)
    return any(_mentions_typed(arg) for arg in typing.get_args(hint))


def _unwrap(hint: Any) -> tuple[type | None, bool]:
    """`X`, `X | None` or `Optional[X]` -> (X, optional); anything else -> (None, False)."""
    if isinstance(hint, type) and typing.get_origin(hint) is None:
        return hint, False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(members) == 1 and isinstance(members[0], type):
            return members[0], len(typing.get_args(hint)) == 2
    return None, False


def _typed_class(cls: type) -> bool:
    return (hasattr(cls, "model_validate") and hasattr(cls, "model_dump")) or (
        dataclasses.is_dataclass(cls))


def wrap(fn: Callable[..., Any], args: Arguments) -> Callable[..., Any]:
    """`fn` taking its typed arguments rebuilt from their JSON form (instances pass as they
    are, so calling the task directly with models still works)."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def rebuilt_async(*a: Any, **kwargs: Any) -> Any:
            return await fn(*a, **args.load(kwargs))

        return rebuilt_async

    @functools.wraps(fn)
    def rebuilt(*a: Any, **kwargs: Any) -> Any:
        return fn(*a, **args.load(kwargs))

    return rebuilt
