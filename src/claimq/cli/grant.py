"""`claimq grant`: least-privilege rights for a PostgreSQL role."""

from __future__ import annotations

import click

from claimq.backends import redact
from claimq.cli._common import _open, json_option
from claimq.cli._main import main
from claimq.cli._render import _emit_json


@main.command()
@click.argument("role")
@click.option("--as", "kind", required=True,
              type=click.Choice(["reader", "producer", "worker", "admin"]),
              help="reader: looks (the dashboard's read-only mode); producer: enqueues; "
                   "worker: runs jobs; admin: also purges, resurrects, writes the audit table.")
@json_option
def grant(role: str, kind: str, as_json: bool) -> None:
    """Give PostgreSQL role ROLE only what one kind of client needs on claimq's tables.

    Run it as the schema's owner (the role that runs `claimq migrate`), again after each
    migrate; the role itself must exist (CREATE ROLE … LOGIN)."""
    app = _open()
    app.grant(role, kind)  # type: ignore[arg-type]
    if as_json:
        _emit_json({"role": role, "kind": kind, "database": redact(app.url)})
    else:
        click.echo(f"granted {role} the rights of a {kind} on {redact(app.url)}")
