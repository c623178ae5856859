"""`claimq migrate`: create or upgrade claimq's tables."""

from __future__ import annotations

import click

from claimq.backends import redact as _redact
from claimq.cli._common import _open, json_option
from claimq.cli._main import main
from claimq.cli._render import _emit_json, _spinner


@main.command()
@json_option
def migrate(as_json: bool) -> None:
    """Create or upgrade claimq's tables (safe to run from several processes at once)."""
    app = _open(migrated=False)
    with _spinner("migrating"):
        applied = app.migrate()
    version = app.backend.schema_version()
    if as_json:
        _emit_json({"applied": applied, "version": version, "database": _redact(app.url)})
    elif applied:
        listed = ", ".join(str(v) for v in applied)
        click.echo(f"applied migration(s) {listed}: schema is at version {version}")
    else:
        click.echo(f"up to date: schema is at version {version}")
