"""`claimq dashboard`: the web dashboard (extra `claimq[dashboard]`) served by uvicorn."""

from __future__ import annotations

import click

from claimq.cli._common import EXIT_USAGE, CliError, Whole, _open, check_port_free
from claimq.cli._main import main


@main.command()
@click.option("--port", type=Whole(0, 65535), default=8080, show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (anything but loopback needs tokens).")
@click.option("--read-token", envvar="CLAIMQ_DASHBOARD_READ_TOKEN", metavar="TOKEN",
              help="Token that may look (env CLAIMQ_DASHBOARD_READ_TOKEN).")
@click.option("--admin-token", envvar="CLAIMQ_DASHBOARD_ADMIN_TOKEN", metavar="TOKEN",
              help="Token that may also act (env CLAIMQ_DASHBOARD_ADMIN_TOKEN).")
@click.option("--allow-anonymous", is_flag=True,
              help="Let requests without a token in as admin (loopback only).")
def dashboard(port: int, host: str, read_token: str | None, admin_token: str | None,
              allow_anonymous: bool) -> None:
    """Serve the web dashboard: live queues, the job browser, operator actions, the audit log."""
    try:
        import uvicorn

        from claimq.dashboard import create_app
        from claimq.dashboard._security import is_loopback
    except ImportError as exc:
        raise CliError(f"the dashboard needs its extra: pip install 'claimq[dashboard]' ({exc})",
                       EXIT_USAGE) from None
    if allow_anonymous and not is_loopback(host):
        raise CliError(f"--allow-anonymous needs a loopback --host, not {host!r}", EXIT_USAGE)
    check_port_free(host, port, "the dashboard")  # a port in use: exit 1, not uvicorn's 3
    app = _open()
    asgi = create_app(app, read_token=read_token, admin_token=admin_token,
                      allow_anonymous=allow_anonymous)  # bad settings: InvalidInput, exit 2
    click.echo(f"claimq dashboard on http://{host}:{port}/", err=True)
    # Open event streams never end by themselves: on Ctrl-C or SIGTERM they get 2 s.
    try:
        uvicorn.run(asgi, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2)
    except SystemExit as exc:
        if exc.code in (None, 0):
            return
        # uvicorn exits 3 when it cannot start (the port taken since the check above)
        raise CliError(f"the dashboard could not serve on {host}:{port} (see above)") from None
