"""The README's dashboard screenshots, taken in Debian's headless Chromium (/usr/bin/chromium,
driven by Playwright; never a downloaded browser) from a real `claimq dashboard` and a real
`claimq worker` on a fresh SQLite database filled with a bit of everything:

    .venv/bin/python tests/dashboard/screenshots.py docs

writes docs/dashboard-{overview,jobs,schedules,workers,flow,latency}.png at 1440 px wide and
docs/dashboard-narrow.png at 800 px, each the viewport only (900 px high), and checks each is
under 200 KB. Every wait is on a signal (a row shown, a list's aria-busy, a chart's points)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import playwright.sync_api as playwright_api

from claimq import App, Throttled

CHROMIUM = "/usr/bin/chromium"
HERE = Path(__file__).parent
TOKEN = "screenshots-admin-token-0123456789"
MAX_BYTES = 200_000
_NEXT_TO_PYTHON = Path(sys.executable).with_name("claimq")
CLAIMQ = str(_NEXT_TO_PYTHON) if _NEXT_TO_PYTHON.exists() else shutil.which("claimq") or "claimq"
T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float, what: str) -> T:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fill(app: App, release: Path) -> None:
    """Queues with due, scheduled, retrying, dead and succeeded jobs; schedules; flow control."""
    app.configure_queue("emails", max_workers=8)
    app.enqueue_many([{"task": "send_email", "queue": "emails",
                       "payload": {"to": f"user{i}@example.com"}} for i in range(42)])
    app.enqueue_many([{"task": "monthly_report", "queue": "reports", "delay": 3600 * (i + 1),
                       "payload": {"month": i + 1}} for i in range(6)])
    for i in range(3):  # retrying: a failed attempt, waiting for its backoff
        app.enqueue("sync_crm", {"account": i}, queue="crm")
    for job in app.claim("setup", ["crm"], limit=3, start=True):
        app.fail(job, ConnectionError("crm.example.com: connection refused"), attempt=1)
    for i in range(4):  # dead letters
        assert app.cancel(app.enqueue("resize_image", {"image": i}, queue="media")) == "cancelled"
    app.configure_queue("billing", rate_limit="10/s", rate_burst=20, key_rate_limit="2/m",
                        aging=30, aging_cap=5)
    app.configure_breaker("charge", failures=3, window=60, cooldown=120, queue="billing")
    app.configure_breaker("refund", failures=5, queue="billing")
    app.enqueue("charge", {"customer": "acme"}, queue="billing", rate_key="customer:acme")
    for _ in range(3):
        app.enqueue("charge", {"customer": "globex"}, queue="billing")
    for job in app.claim("setup", ["billing"], limit=4, start=True):
        if job.payload["customer"] == "acme":
            app.fail(job, Throttled(after=600), attempt=1)
        else:
            app.fail(job, RuntimeError("payment gateway 503"), attempt=1)
    app.schedules.add("cleanup", "cleanup", every=300, queue="maintenance")
    app.schedules.add("nightly-report", "monthly_report", cron="0 3 * * *", tz="Europe/Lisbon",
                      queue="reports")
    app.schedules.add("heartbeat", "echo", every=1, queue="pz")
    wait_until(lambda: app.schedules.fire_due().get("heartbeat"), 10, "the heartbeat's tick")
    app.schedules.pause("heartbeat")
    for _ in range(2):  # running on the real worker until `release` exists
        app.enqueue("hold", {"path": str(release)}, queue="hold")
    app.enqueue_many([{"task": "echo", "queue": "pz", "payload": {"n": i}} for i in range(20)])


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="claimq-screenshots-"))
    url = f"sqlite:///{work}/claimq.db"
    app = App(url)
    app.migrate()
    release = work / "release"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAIMQ_DASHBOARD")}
    env.update({"CLAIMQ_DATABASE_URL": url, "PYTHONPATH": str(HERE), "NO_COLOR": "1",
                "CLAIMQ_DASHBOARD_ADMIN_TOKEN": TOKEN})
    port = _free_port()
    procs = []
    try:
        fill(app, release)
        for args in (["dashboard", "--port", str(port)],
                     ["worker", "dash_app:app", "--queues", "hold,pz", "--concurrency", "4",
                      "--poll-interval", "0.2"]):
            procs.append(subprocess.Popen(  # noqa: S603 - claimq's own command
                [CLAIMQ, *args], env=env, cwd=HERE, stdin=subprocess.DEVNULL,
                stdout=open(work / f"{args[0]}.log", "wb"),  # noqa: SIM115
                stderr=subprocess.STDOUT, start_new_session=True))
        base = f"http://127.0.0.1:{port}/"

        def up() -> bool:
            try:
                urllib.request.urlopen(base + "api/me", timeout=5)  # noqa: S310 - ours
            except urllib.error.HTTPError as exc:
                return exc.code == 401
            except OSError:
                return False
            return False

        wait_until(up, 30, "the dashboard")
        wait_until(lambda: len(app.find_jobs("live", state="running", queue="hold")) == 2, 30,
                   "the worker to run the held jobs")
        shots(base, out, app)
    finally:
        release.touch()
        for proc in procs:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
        app.close()
        shutil.rmtree(work, ignore_errors=True)
    for path in sorted(out.glob("dashboard-*.png")):
        size = path.stat().st_size
        print(f"{path}: {size // 1000} KB")
        if size >= MAX_BYTES:
            raise SystemExit(f"{path} is {size} bytes, over {MAX_BYTES}")


def shots(base: str, out: Path, app: App) -> None:
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        for width in (1440, 800):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(base)
            page.fill("#token", TOKEN)
            page.click("#login button[type=submit]")
            page.wait_for_selector("#who:has-text('admin')")
            if width == 1440:
                wide(page, out)
            jobs(page, out, width)
            page.close()
        browser.close()


def tab(page: playwright_api.Page, name: str) -> None:
    page.click(f"#tabs button[data-tab='{name}']")


def wide(page: playwright_api.Page, out: Path) -> None:
    """The overview, schedules, workers, flow control and latency at 1440 px."""
    page.wait_for_selector("#workers tbody tr")

    def plotted() -> bool:  # a few seconds of the live plots
        return bool(page.evaluate("Chart.getChart('chart-depth').data.labels.length >= 6"))

    wait_until(plotted, 30, "the plots")
    page.screenshot(path=out / "dashboard-overview.png")
    tab(page, "schedules")
    page.wait_for_selector("#schedules[aria-busy='false'] tbody tr")
    page.screenshot(path=out / "dashboard-schedules.png")
    tab(page, "workers")
    page.wait_for_selector("#worker-list[aria-busy='false'] li[data-job]")
    page.screenshot(path=out / "dashboard-workers.png")
    tab(page, "flow")
    page.wait_for_selector("#flow-breakers tr[data-task='charge']")
    page.screenshot(path=out / "dashboard-flow.png")
    tab(page, "latency")
    page.select_option("#latency-window", "3600")
    page.wait_for_selector("#latency[aria-busy='false'][data-window='3600'] "
                           "#latency-tasks tbody tr")
    page.screenshot(path=out / "dashboard-latency.png")


def jobs(page: playwright_api.Page, out: Path, width: int) -> None:
    """The retrying jobs: wide, beside the inspector of the first; narrow, the list."""
    tab(page, "jobs")
    page.click("#states button[data-view='retrying']")
    page.wait_for_selector("#jobs[data-view='retrying'][aria-busy='false'] tbody tr")
    if width == 1440:
        first = page.locator("#jobs tbody tr").first
        job_id = first.get_attribute("data-job")
        first.click()
        page.wait_for_selector(
            f"#inspector[aria-busy='false'] #insp-title:has-text('Job {job_id} ')")
    page.screenshot(path=out / ("dashboard-jobs.png" if width == 1440 else
                                "dashboard-narrow.png"))


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs"))
