"""What every command shares: the exit codes and CliError, the mapping of claimq's errors to
them, the App of --database (opened and checked once per command), and the option types."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from claimq import _audit, _validate
from claimq._processes import import_app
from claimq.app import DEFAULT_URL, App
from claimq.errors import ClaimqError, InvalidInput

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_FAILED = 1  # not found, nothing changed, database missing / unreachable / not migrated
EXIT_USAGE = 2  # bad input: usage, invalid values, bad JSON; nothing was written



class CliError(Exception):
    """A message for the operator and the exit code that goes with it."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


# -- shared state ------------------------------------------------------------------------------


@dataclass
class _State:
    url: str
    explicit: bool  # --database was given on the command line
    app: App | None = None
    checked: bool = False  # the database was found reachable (and migrated, if asked)
    console: Console | None = None


def _state() -> _State:
    return click.get_current_context().find_object(_State) or _State(DEFAULT_URL, False)


def _app() -> App:
    """The App of --database, not yet connected."""
    _audit.via("cli")  # the audit table's actor: cli, not api
    state = _state()
    if state.app is None:
        state.app = App(state.url)
        click.get_current_context().find_root().call_on_close(state.app.close)
    return state.app


def _open(*, migrated: bool = True) -> App:
    """The App of --database, checked: reachable and (unless `migrated` is false) migrated."""
    app = _app()
    state = _state()
    if not state.checked:
        _check_database(app, migrated=migrated)
        state.checked = True
    return app


def _check_database(app: App, *, migrated: bool) -> None:
    """Fail fast and clearly: a SQLite file that does not exist is not created (except by
    `migrate`), and a schema that is missing or behind names `claimq migrate` (the backend
    itself fails fast, with a claimq error, on a server it cannot reach)."""
    app.backend.check_location(missing_ok=not migrated)
    if migrated:
        app.backend.check_schema()


def _use_app(path: str) -> App:
    """The App named by `module:attribute` (see claimq._processes.import_app), on its own
    database unless --database was given on the command line; later _open() calls check it."""
    _audit.via("cli")
    app = import_app(path)
    state = _state()
    if state.explicit and app.url != state.url:
        app.set_url(state.url)
    state.url = app.url
    state.app = app
    state.checked = False
    click.get_current_context().find_root().call_on_close(app.close)
    return app


# -- errors ------------------------------------------------------------------------------------


def check_port_free(host: str, port: int, what: str) -> None:
    """Fails (exit 1) when `host`:`port` cannot be listened on (another process has it, or the
    address is not this machine's), before anything starts; 0 (any free port) is not checked."""
    import socket

    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CliError(f"cannot listen on {host}:{port} for {what}: {reason.lower()}") from None


def _classify(exc: BaseException) -> tuple[str, int] | None:
    """The operator's message and exit code for an expected error; None for a bug."""
    if isinstance(exc, CliError):
        return str(exc), exc.code
    if isinstance(exc, InvalidInput):
        return str(exc) or "invalid input", EXIT_USAGE
    if isinstance(exc, ClaimqError):
        # JobNotFound, SchemaMissing/MigrationError, DatabaseMissing, DatabaseUnavailable,
        # DatabaseError, LeaseLost: the backends name the cause in the message.
        return str(exc) or type(exc).__name__, EXIT_FAILED
    return None


def _say_error(message: str) -> None:
    click.echo(f"error: {' '.join(message.split())}", err=True)


# -- parameter types ---------------------------------------------------------------------------


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhdw])")
DURATION_HELP = "a duration such as 30s, 5m, 2h, 1d, 1h30m, or plain seconds"


def parse_duration(text: str) -> float | None:
    """Seconds from `90`, `1.5`, `30s`, `5m`, `2h`, `1d`, `1w` or a sum such as `1h30m`; None
    for anything else (negative numbers included: callers say what they accept)."""
    text = text.strip().lower()
    try:
        return float(text)
    except ValueError:
        pass
    if not text or _DURATION.sub("", text):
        return None
    return sum(float(n) * _UNITS[unit] for n, unit in _DURATION.findall(text))


class Seconds(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """A duration (parse_duration: `30s`, `5m`, `1d`, plain seconds) up to
    _validate.MAX_SECONDS, in seconds; `none` too when `allow_none`."""

    name = "duration"

    def __init__(self, *, allow_zero: bool = True, allow_none: bool = False) -> None:
        self.allow_zero = allow_zero
        self.allow_none = allow_none

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or isinstance(value, float):
            return value
        text = str(value).strip()
        if self.allow_none and text.lower() == "none":
            return None
        number = parse_duration(text)
        if number is None:
            if text.startswith("-"):
                self.fail(f"must be {'>= 0' if self.allow_zero else '> 0'}, got {text}",
                          param, ctx)
            none = " or `none`" if self.allow_none else ""
            self.fail(f"must be {DURATION_HELP}{none}; got {text!r}", param, ctx)
        if not math.isfinite(number):
            self.fail("must be a finite duration", param, ctx)
        if number < 0 or (number == 0 and not self.allow_zero):
            self.fail(f"must be {'>= 0' if self.allow_zero else '> 0'}, got {text}", param, ctx)
        if number > _validate.MAX_SECONDS:
            self.fail(
                f"must be at most {_validate.MAX_SECONDS:.0f} seconds (100 years), got {text}",
                param, ctx,
            )
        return number


class Whole(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """A whole number from `low` to `high` (either None: no bound), with a message that says
    so (click's IntRange says `'abc' is not a valid integer range`)."""

    name = "integer"

    def __init__(self, low: int | None = None, high: int | None = None) -> None:
        self.low = low
        self.high = high

    def _bounds(self) -> str:
        if self.low is not None and self.high is not None:
            return f" from {self.low} to {self.high}"
        if self.low is not None:
            return f" of at least {self.low}"
        if self.high is not None:
            return f" of at most {self.high}"
        return ""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or isinstance(value, int):
            number = value
        else:
            try:
                number = int(str(value).strip().replace("_", ""), 10)
            except ValueError:
                number = None
            if number is None:
                self.fail(f"must be a whole number{self._bounds()}, got {value!r}", param, ctx)
        if number is not None and ((self.low is not None and number < self.low)
                                   or (self.high is not None and number > self.high)):
            self.fail(f"must be a whole number{self._bounds()}, got {number}", param, ctx)
        return number


SECONDS = Seconds()
JOB_ID = Whole(1, 2**63 - 1)
PRIORITY = Whole(*_validate.PRIORITY_RANGE)
POSITIVE_SECONDS = Seconds(allow_zero=False)


def json_option(fn: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Machine-readable JSON output."
    )(fn)


def _parse_payload(text: str | None) -> dict[str, Any] | None:
    """--payload: a JSON object, `@file` to read one from a file, `-` to read stdin."""
    if text is None:
        return None
    source = "--payload"
    if text == "-":
        text, source = sys.stdin.read(), "--payload from stdin"
    elif text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as fh:
                text, source = fh.read(), f"--payload file {text[1:]}"
        except OSError as exc:
            raise CliError(f"cannot read --payload file: {exc}", EXIT_USAGE) from None
    try:
        # Numbers no 64-bit float or integer holds stay marked, for the payload check to refuse.
        value = _validate.parse_json(text)
    except (ValueError, RecursionError) as exc:
        raise CliError(f"{source} is not valid JSON: {exc}", EXIT_USAGE) from None
    if not isinstance(value, dict):
        raise CliError(
            f"{source} must be a JSON object such as '{{\"n\": 1}}', got {type(value).__name__}",
            EXIT_USAGE,
        )
    return value
