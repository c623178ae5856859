"""App.close() on SQLite while other threads of the process are inside statements: CPython's
sqlite3 crashes the process (SIGSEGV) when a connection is closed under a thread stepping a
statement on it. A worker's database call abandoned at its timeout leaves such a thread behind
it, and `drain()` then `app.close()` is the usual ending (CI: an xdist worker died in
test_worker_outcomes that way). Run in a child process, so a crash fails this test instead of
taking the test runner with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHILD = r"""
import sys, threading, time
from claimq import App

app = App(sys.argv[1])
app.migrate()
ids = [app.enqueue("t.x", {"n": n}) for n in range(50)]
stop = threading.Event()
started = threading.Barrier(4)

def reader() -> None:
    started.wait()
    while not stop.is_set():
        try:
            app.list_jobs("live", limit=1000)
            app.get_job(ids[0])
        except Exception:
            pass  # a closed App may refuse; only a crash fails the test

threads = [threading.Thread(target=reader) for _ in range(3)]
for t in threads:
    t.start()
started.wait()
for _ in range(40):
    time.sleep(0.005)
    app.close()  # the readers reopen a connection at their next call
stop.set()
for t in threads:
    t.join()
app.close()
print("closed cleanly")
"""


def test_close_while_other_threads_run_statements_does_not_crash(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/claimq.db"
    done = subprocess.run([sys.executable, "-c", CHILD, url], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "closed cleanly" in done.stdout
