"""The `claimq` command line: the `main` group; each noun is a module of this package.

Parsing is click's, tables and progress are rich's; every operation goes through `claimq.App`
(`enqueue` checks its job by the App's rule, `claimq._specs.job_spec`, before it opens the
database, and writes that checked job with the App's backend: one check per job).
Shared pieces: `_common` (exit codes, error mapping, the App of --database, option types) and
`_render` (JSON, tables, views); the root group `main` is `_main`'s, and every noun module adds its
commands to it (this package imports them all). Other modules add commands lazily: see `_Main`
and OPTIONAL_COMMANDS.
"""

from __future__ import annotations

# Each noun lives in a module of its own and adds its commands to `main` when imported.
from claimq.cli import dashboard as _dashboard  # noqa: F401
from claimq.cli import dead as _dead  # noqa: F401
from claimq.cli import enqueue as _enqueue  # noqa: F401
from claimq.cli import grant as _grant  # noqa: F401
from claimq.cli import jobs as _jobs  # noqa: F401
from claimq.cli import migrate as _migrate  # noqa: F401
from claimq.cli import queues as _queues  # noqa: F401
from claimq.cli import retention as _retention  # noqa: F401
from claimq.cli import schedules as _schedules  # noqa: F401
from claimq.cli import stats as _stats  # noqa: F401
from claimq.cli import worker as _worker  # noqa: F401
from claimq.cli import workers as _workers  # noqa: F401
from claimq.cli import workflows as _workflows  # noqa: F401
from claimq.cli._common import CliError
from claimq.cli._main import OPTIONAL_COMMANDS, main

__all__ = ["OPTIONAL_COMMANDS", "CliError", "main"]
