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

from claimq._validate import UnstorableNumber
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


# -- the handler's parameters: what a job's arguments must fit -------------------------------

RESERVED = frozenset({"conn"})  # task.enqueue()'s own keyword: no handler parameter may take it
_NONE = type(None)
# Simple annotations checked at enqueue: a payload holds JSON values, so these are all there is.
_SIMPLE: dict[Any, Callable[[Any], bool]] = {
    int: lambda v: type(v) is int or (isinstance(v, int) and not isinstance(v, bool)),
    float: lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    str: lambda v: isinstance(v, str),
    bool: lambda v: isinstance(v, bool),
    list: lambda v: isinstance(v, list | tuple),
    tuple: lambda v: isinstance(v, list | tuple),
    dict: lambda v: isinstance(v, Mapping),
    _NONE: lambda v: v is None,
    None: lambda v: v is None,
}


def _simple_check(hint: Any) -> tuple[frozenset[type], Callable[[Any], bool]] | None:
    """A cheap check of a simple annotation (int, float, str, bool, list[...], dict[...], None,
    Literal[...] and unions of them): the exact types that pass at once (one set lookup, the
    common case), and the predicate that decides the rest; None: not checked (Any, classes,
    TypeVars, …)."""
    try:
        if hint in _SIMPLE:
            exact = _EXACT[_NONE if hint is None else hint]
            return exact, _SIMPLE[hint]
    except TypeError:  # an unhashable annotation
        return None
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        allowed = typing.get_args(hint)
        return frozenset(), lambda v: any(v == a and type(v) is type(a) for a in allowed)
    if origin in (typing.Union, types.UnionType):
        members = [_simple_check(a) for a in typing.get_args(hint)]
        if any(m is None for m in members):
            return None
        known = typing.cast(list[tuple[frozenset[type], Callable[[Any], bool]]], members)
        exact = frozenset().union(*(m[0] for m in known))
        checks = tuple(m[1] for m in known)
        return exact, lambda v: any(check(v) for check in checks)
    if origin in (list, tuple, dict):
        return _EXACT[origin], _SIMPLE[origin]  # the container: its items are the handler's
    return None


_EXACT: dict[Any, frozenset[type]] = {
    int: frozenset({int}), float: frozenset({int, float}), str: frozenset({str}),
    bool: frozenset({bool}), list: frozenset({list, tuple}), tuple: frozenset({list, tuple}),
    dict: frozenset({dict}), _NONE: frozenset({_NONE}),
}


def _label(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


class Parameters:
    """The parameters a handler takes from a job's payload, read once at registration: which
    names it accepts, which it requires, which bind positionally (task.enqueue(7)), and cheap
    type checks where a simple annotation says what a value must be. `check` refuses a payload
    that the worker's call would refuse (InvalidInput at enqueue, not a dead letter later)."""

    __slots__ = ("any_keyword", "checks", "listed", "names", "positional", "required", "task")

    def __init__(self, task: str, fn: Callable[..., Any], skip_first: bool) -> None:
        self.task = task
        self.names: frozenset[str] = frozenset()
        self.listed = ""  # the names, in the handler's order, for error messages
        self.required: frozenset[str] = frozenset()
        self.positional: tuple[str, ...] = ()
        self.any_keyword = True
        # name -> (types that pass at once, the predicate for the rest, annotation, default None)
        self.checks: dict[str, tuple[frozenset[type], Callable[[Any], bool], Any, bool]] = {}
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):  # no signature to read (a builtin): nothing to check
            return
        params = list(signature.parameters.values())[1 if skip_first else 0:]
        kinds = inspect.Parameter
        for p in params:
            if p.name in RESERVED and p.kind not in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD):
                raise InvalidInput(
                    f"task {task!r}: a handler parameter may not be named {p.name!r}: "
                    f"`{p.name}=` is task.enqueue()'s own keyword (the caller's connection); "
                    "rename the parameter")
            if p.kind is kinds.POSITIONAL_ONLY and p.default is p.empty:
                raise InvalidInput(
                    f"task {task!r}: parameter {p.name!r} is positional-only, but a job's "
                    "arguments are passed to the handler by name; drop the `/`")
        named = [p for p in params if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)]
        self.names = frozenset(p.name for p in named)
        self.listed = ", ".join(p.name for p in named)
        self.required = frozenset(p.name for p in named if p.default is p.empty)
        self.positional = tuple(p.name for p in named if p.kind is kinds.POSITIONAL_OR_KEYWORD)
        self.any_keyword = any(p.kind is kinds.VAR_KEYWORD for p in params)
        hints = _hints(inspect.unwrap(fn))
        for p in named:
            hint = hints.get(p.name)
            check = None if hint is None or _mentions_typed(hint) else _simple_check(hint)
            if check is not None:
                self.checks[p.name] = (*check, hint, p.default is None)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """task.enqueue()'s positional arguments named after the handler's parameters, in
        order, with its keyword arguments."""
        if len(args) > len(self.positional):
            takes = ", ".join(self.positional) or "none"
            raise InvalidInput(
                f"task {self.task!r} takes {len(self.positional)} positional argument(s) "
                f"({takes}), got {len(args)}")
        payload = dict(zip(self.positional, args, strict=False))
        for name in kwargs:
            if name in payload:
                raise InvalidInput(f"task {self.task!r} got two values for argument {name!r}")
        payload.update(kwargs)
        return payload

    def check(self, payload: object) -> None:
        """Raises InvalidInput unless the payload fits the handler: no unknown argument, none
        missing, and those with a simple annotation of the right type. A payload that is not
        a mapping is left to the payload check."""
        if payload is None:
            payload = {}  # no payload: no arguments
        elif type(payload) is not dict and not isinstance(payload, Mapping):
            return
        if not self.any_keyword and not self.names.issuperset(payload):
            unknown = sorted(map(str, set(payload) - self.names))
            self._refuse(f"unknown argument(s) {', '.join(map(repr, unknown))}")
        if not self.required.issubset(payload):
            missing = sorted(self.required - set(payload))
            self._refuse(f"missing argument(s) {', '.join(map(repr, missing))}")
        for name, (exact, check, hint, none_default) in self.checks.items():
            if name in payload:
                value = payload[name]
                if type(value) in exact or check(value) or (value is None and none_default):
                    continue
                if isinstance(value, UnstorableNumber):
                    continue  # the payload check names it, and why
                self._refuse(f"argument {name!r} must be {_label(hint)}, got "
                             f"{type(value).__name__} {_validate_short(value)}")

    def _refuse(self, problem: str) -> typing.NoReturn:
        takes = ", ".join(filter(None, (self.listed, "**kwargs" if self.any_keyword else "")))
        raise InvalidInput(f"arguments of task {self.task!r} do not fit the handler's "
                           f"parameters: {problem} (it takes: {takes or 'nothing'})")


def _validate_short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
