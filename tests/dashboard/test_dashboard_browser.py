"""The dashboard in real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright),
served by a real `claimq dashboard` process, with real `claimq worker` processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest
from polling import wait_until

from claimq import App, DeadReason, RetryPolicy, Workflow
from claimq.backends.base import Owned

CHROMIUM = "/usr/bin/chromium"
ADMIN = "browser-admin-token-0123456789"
HERE = Path(__file__).parent
ROOT = HERE.parents[1]
_NEXT_TO_PYTHON = Path(sys.executable).with_name("claimq")
CLAIMQ = str(_NEXT_TO_PYTHON) if _NEXT_TO_PYTHON.exists() else shutil.which("claimq") or "claimq"
SCREENSHOT = os.environ.get("CLAIMQ_DASHBOARD_SCREENSHOT")  # a path: extra screenshots there
# (the README's come from tests/dashboard/screenshots.py)

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proc:
    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log_path = log
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([CLAIMQ, *args], env=env, cwd=HERE, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def alive(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"exited {self.proc.returncode}: {self.log_path.read_text()}")
        return True

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self._log.close()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('dash')}/claimq.db"
    App(url).migrate()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CLAIMQ_DASHBOARD")}
    environ.update({"CLAIMQ_DATABASE_URL": url, "PYTHONPATH": str(HERE), "NO_COLOR": "1",
                    "CLAIMQ_DASHBOARD_ADMIN_TOKEN": ADMIN})
    return environ


@pytest.fixture(scope="module")
def app(env: dict[str, str]) -> Iterator[App]:
    instance = App(env["CLAIMQ_DATABASE_URL"])
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def server(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    proc = Proc(["dashboard", "--port", str(port)], env,
                tmp_path_factory.mktemp("logs") / "dashboard.log")
    base = f"http://127.0.0.1:{port}/"

    def up() -> bool:
        proc.alive()
        try:
            urllib.request.urlopen(base + "api/me", timeout=5)  # noqa: S310 - our own server
        except urllib.error.HTTPError as exc:
            return exc.code == 401
        except OSError:
            return False
        return False

    wait_until(up, 30, "the dashboard server")
    yield base
    proc.stop()


@pytest.fixture
def worker(env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[str], Proc]]:
    started: list[Proc] = []

    def start(queues: str) -> Proc:
        started.append(Proc(["worker", "dash_app:app", "--queues", queues, "--concurrency", "4",
                             "--poll-interval", "0.1", "--grace", "2"], env,
                            tmp_path / f"worker-{len(started)}.log"))
        return started[-1]

    yield start
    for proc in started:
        proc.stop()


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[playwright_api.Page]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(server)
        page.fill("#token", ADMIN)
        page.click("#login button[type=submit]")
        page.wait_for_selector("#who:has-text('admin')")
        yield page
        browser.close()
        assert errors == []


def depth(page: playwright_api.Page, queue: str) -> int | None:
    cell = page.locator(f"#queues tr[data-queue='{queue}'] td.depth")
    return int(cell.inner_text()) if cell.count() else None


def confirm(page: playwright_api.Page) -> None:
    page.wait_for_selector("#confirm[open]")
    page.click("#confirm-yes")


# The audit tab's rows once its load is answered (the rows of an earlier visit are there before).
AUDIT_LOADED = "#audit[aria-busy='false'] tbody tr"


def tab(page: playwright_api.Page, name: str) -> None:
    page.click(f"#tabs button[data-tab='{name}']")


def test_depth_falls_live_as_a_worker_drains_the_queue(
    page: playwright_api.Page, app: App, worker: Callable[[str], Proc]
) -> None:
    tab(page, "overview")
    app.enqueue_many([{"task": "step", "queue": "drain", "payload": {"n": i}}
                      for i in range(1500)])
    wait_until(lambda: depth(page, "drain") == 1500, 15, "the page to show 1500 waiting")
    page.evaluate("window.__sameDocument = true")
    proc = worker("drain")
    seen = wait_until(lambda: proc.alive() and (d := depth(page, "drain")) is not None
                      and 0 < d < 1500 and d, 60, "the depth to fall")
    if SCREENSHOT:
        page.wait_for_timeout(3000)  # a few seconds of throughput on the plots
        page.screenshot(path=SCREENSHOT, full_page=True)
    wait_until(lambda: depth(page, "drain") == 0, 120, f"the queue to drain (last {seen})")
    assert page.evaluate("window.__sameDocument") is True  # no reload: the page updated itself


def test_pausing_a_queue_stops_its_worker_taking_its_jobs(
    page: playwright_api.Page, app: App, worker: Callable[[str], Proc]
) -> None:
    tab(page, "overview")
    app.configure_queue("pz")
    proc = worker("pz,drain")
    page.click("#queues tr[data-queue='pz'] button.queue-pause")
    confirm(page)
    page.wait_for_selector("#queues tr[data-queue='pz'] td.state:has-text('paused')")
    assert app.queues()[[q.name for q in app.queues()].index("pz")].paused is True
    held = [app.enqueue("echo", {"i": i}, queue="pz") for i in range(5)]
    # A job on the other queue the same worker serves: once it is done, the worker has polled
    # since the pause, and it left the paused queue's jobs alone.
    sentinel = app.enqueue("step", {"n": -1}, queue="drain")
    wait_until(lambda: proc.alive() and app.get_job(sentinel).status == "succeeded", 30,
               "the worker to run the other queue's job")
    assert [app.get_job(i).status for i in held] == ["pending"] * 5
    wait_until(lambda: depth(page, "pz") == 5, 10, "the page to show 5 waiting")
    page.click("#queues tr[data-queue='pz'] button.queue-resume")
    confirm(page)
    wait_until(lambda: depth(page, "pz") == 0, 30, "the resumed queue to drain")
    assert {app.get_job(i).status for i in held} == {"succeeded"}
    tab(page, "audit")
    page.wait_for_selector(AUDIT_LOADED)
    actions = page.locator("#audit tbody tr td:nth-child(4)").all_inner_texts()
    assert actions[:2] == ["resume", "pause"]


def test_bulk_resurrect_by_filter_shows_the_count_then_they_complete(
    page: playwright_api.Page, app: App, worker: Callable[[str], Proc]
) -> None:
    picked = [app.enqueue("echo", {"i": i}, queue="pz", tags=("batch",), delay=3600)
              for i in range(4)]
    others = [app.enqueue("echo", {"i": 9}, queue="pz", tags=("other",), delay=3600)]
    for job_id in picked + others:
        app.cancel(job_id)
    worker("pz")
    tab(page, "jobs")
    page.select_option("#f-table", "dead")
    page.fill("#f-queue", "pz")
    page.fill("#f-tag", "batch")
    page.click("#search")
    wait_until(lambda: page.locator("#jobs tbody tr").count() == 4, 10, "4 rows")
    page.select_option("#bulk-action", "resurrect")
    page.click("#bulk-preview")
    page.wait_for_selector("#bulk-count:has-text('4 jobs match')")
    page.click("#bulk-apply")
    confirm(page)
    page.wait_for_selector("#bulk-result:has-text('resurrect: 4 of 4 changed')")
    wait_until(lambda: {app.get_job(i).status for i in picked} == {"succeeded"}, 30,
               "the resurrected jobs to complete")
    assert app.get_job(others[0]).status == "dead"
    page.select_option("#f-table", "archive")
    page.fill("#f-tag", "batch")
    page.click("#search")
    wait_until(lambda: page.locator("#jobs tbody tr").count() == 4, 10, "4 rows")


def test_a_script_payload_shows_as_text(page: playwright_api.Page, app: App) -> None:
    hostile = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"
    job_id = app.enqueue("echo", {"html": hostile}, queue="held", tags=("<b>bold</b>",))
    tab(page, "jobs")
    page.select_option("#f-table", "live")
    page.fill("#f-queue", "held")
    page.fill("#f-tag", "")
    page.click("#search")
    page.click(f"#jobs tr[data-job='{job_id}']")
    page.wait_for_selector(f"#insp-title:has-text('Job {job_id} ')")
    assert json.loads(page.locator("#insp-payload").inner_text()) == {"html": hostile}
    assert "<b>bold</b>" in page.locator(f"#jobs tr[data-job='{job_id}']").inner_text()
    assert page.locator("#inspector img, #jobs img, #jobs b, #inspector script").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert re.search(r"Job \d+ · echo · pending", page.locator("#insp-title").inner_text())


def node_x(page: playwright_api.Page, job_id: int) -> float:
    transform = page.locator(f"#wf-graph g.node[data-job='{job_id}']").get_attribute("transform")
    match = re.fullmatch(r"translate\(([\d.]+),([\d.]+)\)", transform or "")
    assert match, transform
    return float(match.group(1))


def graph_statuses(page: playwright_api.Page) -> dict[int, str | None]:
    return {int(node.get_attribute("data-job") or 0): node.get_attribute("data-status")
            for node in page.locator("#wf-graph g.node").all()}


def test_a_workflow_page_draws_its_graph_retries_and_cancels(
    page: playwright_api.Page, app: App, worker: Callable[[str], Proc], tmp_path: Path
) -> None:
    opened = tmp_path / "gate-open"
    wf = Workflow("<b>etl</b>")
    extract = wf.add("echo", {"step": "extract"}, queue="wf")
    gated = wf.add("gate", {"path": str(opened)}, after=[extract], queue="wf")
    parts = [wf.add("echo", {"part": i}, after=[gated], queue="wf") for i in range(2)]
    load = wf.add("echo", {"step": "load"}, after=parts, queue="wf")
    handle = app.enqueue_workflow(wf)
    ids = [handle.job_id(s) for s in (extract, gated, *parts, load)]
    proc = worker("wf")
    wait_until(lambda: proc.alive() and handle.status().state == "failed", 60,
               "the closed gate to fail the workflow")

    tab(page, "workflows")
    row = page.locator(f"#workflows tr[data-workflow='{handle.id}']")
    row.wait_for()
    assert row.locator("td.state").inner_text() == "failed"
    assert "succeeded 1, dead 4" in row.locator("td.counts").inner_text()
    row.click()
    page.wait_for_selector(f"#wf-graph g.node[data-job='{ids[0]}']")
    assert page.url.endswith(f"#workflows/{handle.id}")
    assert "<b>etl</b>" in page.locator("#wf-title").inner_text()
    assert page.locator("#tab-workflows b").count() == 0  # the name is text, never markup
    assert graph_statuses(page) == {ids[0]: "succeeded", ids[1]: "dead", ids[2]: "dead",
                                    ids[3]: "dead", ids[4]: "dead"}
    assert page.locator("#wf-graph path.edge").count() == 5
    # left to right: each job after what it waits for; the two parts side by side
    xs = [node_x(page, i) for i in ids]
    assert xs[0] < xs[1] < xs[2] == xs[3] < xs[4]
    waits = page.locator(f"#wf-jobs tr[data-job='{ids[4]}'] td.waits").inner_text()
    assert waits == f"{ids[2]}, {ids[3]}"
    assert "dependency_failed" in page.locator(f"#wf-jobs tr[data-job='{ids[4]}']").inner_text()
    if SCREENSHOT:
        page.screenshot(path=SCREENSHOT.replace(".png", "-workflow.png"), full_page=True)

    opened.write_text("open")
    page.click("#wf-retry")
    confirm(page)
    page.wait_for_selector("#wf-message:has-text('retry: 1 failed step(s) resurrected')")
    # the page follows the workflow while the worker runs the rest of it
    page.wait_for_selector("#wf-state:has-text('succeeded')", timeout=60_000)
    wait_until(lambda: set(graph_statuses(page).values()) == {"succeeded"}, 10,
               "every node to show succeeded")
    assert page.locator("#wf-graph path.edge.unresolved").count() == 0
    assert handle.status().state == "succeeded"

    idle = Workflow("idle")
    first = idle.add("echo", {"n": 1}, queue="wf-idle")  # no worker serves this queue
    idle.add("echo", {"n": 2}, after=[first], queue="wf-idle")
    waiting = app.enqueue_workflow(idle)
    page.click("#wf-back")
    page.locator(f"#workflows tr[data-workflow='{waiting.id}']").click()
    held_node = f"#wf-graph g.node.status-held[data-job='{waiting.job_ids[1]}']"
    page.wait_for_selector(held_node)
    page.click(held_node)  # a held job opens in the inspector, where it can be cancelled alone
    # (that job's title: the inspector may still be open on an earlier test's job)
    page.wait_for_selector(f"#insp-title:has-text('Job {waiting.job_ids[1]} · echo · held')")
    assert page.locator("#act-cancel").is_visible()
    assert not page.locator("#act-run-now").is_visible()
    page.click("#insp-workflow")  # back to its workflow's page
    page.wait_for_selector(held_node)
    assert page.url.endswith(f"#workflows/{waiting.id}")
    page.click("#wf-cancel")
    confirm(page)
    page.wait_for_selector("#wf-message:has-text('cancel: 2 job(s) cancelled')")
    page.wait_for_selector("#wf-state:has-text('failed')")
    assert {(j.status, j.reason) for j in waiting.jobs()} == {("dead", DeadReason.CANCELLED)}
    # a node opens that job in the inspector
    page.click(f"#wf-graph g.node[data-job='{waiting.job_ids[1]}']")
    page.wait_for_selector(f"#insp-title:has-text('Job {waiting.job_ids[1]} · echo · cancelled')")
    tab(page, "audit")
    page.wait_for_selector(AUDIT_LOADED)
    targets = page.locator("#audit tbody tr td:nth-child(5)").all_inner_texts()
    assert targets[:2] == [f"workflow {waiting.id}", f"workflow {handle.id}"]


# -- issue 28, item 4: what was wrong on the page ----------------------------------------------


def search_jobs(page: playwright_api.Page, table: str, queue: str) -> None:
    tab(page, "jobs")
    page.select_option("#f-table", table)
    for field in ("task", "status", "tag", "text"):
        page.fill(f"#f-{field}", "")
    page.fill("#f-queue", queue)
    page.click("#search")


def in_view(page: playwright_api.Page, selector: str) -> bool:
    """`selector`'s element is inside the viewport and not under another one at its centre."""
    return bool(page.evaluate("""(selector) => {
        const node = document.querySelector(selector);
        const r = node.getBoundingClientRect();
        if (!r.height || r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth)
            return false;
        const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return top !== null && (node === top || node.contains(top));
    }""", selector))


def test_cancel_and_resurrect_messages_stay_in_view_until_a_few_seconds_pass(
    page: playwright_api.Page, app: App
) -> None:
    job_id = app.enqueue("echo", {"n": 1}, queue="msg", delay=3600)  # no worker serves msg
    search_jobs(page, "live", "msg")
    page.click(f"#jobs tr[data-job='{job_id}']")
    page.wait_for_selector(f"#insp-title:has-text('Job {job_id} ')")
    page.click("#act-cancel")
    confirm(page)
    page.wait_for_selector(f"#insp-title:has-text('Job {job_id} · echo · cancelled')")
    page.wait_for_timeout(1500)  # the reloaded inspector did not clear it
    assert page.locator("#insp-message").inner_text() == "cancel: cancelled"
    assert in_view(page, "#insp-message")
    page.fill("#act-payload", '{"n": 2}')
    page.click("#act-resurrect")
    confirm(page)
    page.wait_for_selector(f"#insp-title:has-text('Job {job_id} · echo · pending')")
    page.wait_for_timeout(1500)
    assert page.locator("#insp-message").inner_text() == "resurrect: resurrected"
    assert in_view(page, "#insp-message")
    assert app.get_job(job_id).payload == {"n": 2}
    # until the next action, or a few seconds
    page.wait_for_selector("#insp-message:empty", state="attached", timeout=12_000)


def test_the_inspector_opens_in_view_beside_a_long_table(
    page: playwright_api.Page, app: App
) -> None:
    ids = app.enqueue_many([{"task": "echo", "queue": "long", "payload": {"i": i},
                             "delay": 3600} for i in range(60)])
    search_jobs(page, "live", "long")
    wait_until(lambda: page.locator("#jobs tbody tr").count() == 50, 10, "a page of 50 rows")
    first = f"#jobs tr[data-job='{max(ids)}'] td:first-child"  # the newest: the top row
    page.click(first)
    page.wait_for_selector(f"#insp-title:has-text('Job {max(ids)} ')")
    # where the operator looks: the inspector's top, and the row clicked still beside it
    assert in_view(page, "#insp-title") and in_view(page, "#insp-actions")
    assert in_view(page, first)
    last = "#jobs tbody tr:nth-child(50) td:first-child"
    page.locator(last).scroll_into_view_if_needed()
    page.click(last)
    page.wait_for_selector(f"#insp-title:has-text('Job {sorted(ids)[-50]} ')")
    assert in_view(page, "#insp-title") and in_view(page, last)
    page.click("#insp-close")
    assert not page.locator("#inspector").is_visible()
    page.set_viewport_size({"width": 800, "height": 700})  # narrow: the panel fills the width
    try:
        page.click(first)
        page.wait_for_selector(f"#insp-title:has-text('Job {max(ids)} ')")
        assert in_view(page, "#insp-title")
        page.keyboard.press("Escape")
        assert not page.locator("#inspector").is_visible()
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_limit_is_set_in_an_in_page_form_not_a_native_prompt(
    page: playwright_api.Page, app: App
) -> None:
    native: list[str] = []

    def refuse(dialog: playwright_api.Dialog) -> None:
        native.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", refuse)
    try:
        tab(page, "overview")
        app.configure_queue("lim")
        row = "#queues tr[data-queue='lim']"
        page.wait_for_selector(row)
        page.click(f"{row} button.limit-button")
        page.wait_for_selector("#limit-dialog[open]")
        assert page.locator("#limit-queue").inner_text() == "lim"
        page.fill("#limit-value", "0")
        page.click("#limit-set")
        page.wait_for_selector("#limit-error:has-text('at least 1')")
        assert page.locator("#limit-dialog[open]").count() == 1
        page.fill("#limit-value", "3")
        page.click("#limit-set")
        page.wait_for_selector("#limit-dialog:not([open])", state="attached")
        wait_until(lambda: [q.max_workers for q in app.queues() if q.name == "lim"] == [3], 10,
                   "the limit to be set")
        page.wait_for_selector(f"{row} td.limit:has-text('3')")
        page.click(f"{row} button.limit-button")  # Cancel changes nothing
        page.wait_for_selector("#limit-dialog[open]")
        assert page.locator("#limit-value").input_value() == "3"
        page.fill("#limit-value", "")
        page.click("#limit-cancel")
        page.wait_for_selector("#limit-dialog:not([open])", state="attached")
        assert [q.max_workers for q in app.queues() if q.name == "lim"] == [3]
        page.click(f"{row} button.limit-button")  # empty: no limit
        page.fill("#limit-value", "")
        page.keyboard.press("Enter")
        wait_until(lambda: [q.max_workers for q in app.queues() if q.name == "lim"] == [None],
                   10, "the limit to be lifted")
        page.wait_for_selector(f"{row} td.limit:has-text('none')")
    finally:
        page.remove_listener("dialog", refuse)
    assert native == []
    tab(page, "audit")
    page.wait_for_selector(AUDIT_LOADED)
    assert page.locator("#audit tbody tr td:nth-child(5)").all_inner_texts()[:2] == [
        "queue lim", "queue lim"]


def test_times_are_utc_and_say_so_whatever_the_browsers_zone(
    page: playwright_api.Page, server: str, app: App
) -> None:
    job_id = app.enqueue("echo", {"n": 1}, queue="tz", delay=3600)
    created = app.get_job(job_id).created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    # an audit row of its own (run alone, or before the tests that act, it would have none)
    app.cancel(app.enqueue("echo", {"n": 2}, queue="tz-audit"))
    browser = page.context.browser
    assert browser is not None
    context = browser.new_context(timezone_id="Asia/Kolkata", viewport={"width": 1280,
                                                                         "height": 900})
    try:
        other = context.new_page()
        other.goto(server)
        other.fill("#token", ADMIN)
        other.click("#login button[type=submit]")
        other.wait_for_selector("#who:has-text('admin')")
        assert other.evaluate("new Date().getTimezoneOffset()") == -330  # not UTC here
        search_jobs(other, "live", "tz")
        cell = other.locator(f"#jobs tr[data-job='{job_id}'] td:nth-child(8)")
        cell.wait_for()
        assert cell.inner_text() == created
        other.click(f"#jobs tr[data-job='{job_id}'] td:first-child")
        assert other.locator("#insp-fields dd[data-field='created_at']").inner_text() == created
        tab(other, "audit")
        other.wait_for_selector(AUDIT_LOADED)
        for text in other.locator("#audit tbody tr td:nth-child(2)").all_inner_texts():
            assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text), text
    finally:
        context.close()


def test_pause_and_deactivate_are_explained_on_the_page(
    page: playwright_api.Page, app: App
) -> None:
    tab(page, "overview")
    app.configure_queue("explained")
    row = "#queues tr[data-queue='explained']"
    page.wait_for_selector(row)
    assert "running jobs finish" in (
        page.locator(f"{row} button.queue-pause").get_attribute("title") or "")
    assert "separate switch" in (
        page.locator(f"{row} button.queue-deactivate").get_attribute("title") or "")
    assert page.locator(f"{row} button.limit-button").get_attribute("title")
    help_line = page.locator("#queue-help")
    assert help_line.is_visible()
    assert "Deactivate" in help_line.inner_text() and "Pause" in help_line.inner_text()


def test_a_search_draws_only_its_own_answer_whatever_order_the_answers_arrive_in(
    page: playwright_api.Page, app: App
) -> None:
    """Changing the table searches, and so does the Search button: the first search's answer,
    arriving last, was drawn too (CI: a job twice, a strict-mode error on its row)."""
    job_id = app.enqueue("echo", {"n": 1}, queue="order", delay=3600)  # no worker serves it
    held: list[playwright_api.Route] = []

    def hold_the_others(route: playwright_api.Route) -> None:
        if "queue=order" in route.request.url:
            route.continue_()
        else:
            held.append(route)

    tab(page, "jobs")
    page.route("**/api/jobs?*", hold_the_others)
    try:
        for field in ("queue", "task", "status", "tag", "text"):
            page.fill(f"#f-{field}", "")
        page.select_option("#f-table", "live")  # a search of its own: every live job
        # (Playwright runs the route handler while the test calls it: evaluate lets it)
        wait_until(lambda: page.evaluate("true") and len(held) == 1, 10,
                   "the first search to be on its way")
        page.fill("#f-queue", "order")
        page.click("#search")
        page.wait_for_selector(f"#jobs tr[data-job='{job_id}']")
        finished = [route.request for route in held]
        for route in held:
            route.continue_()

        def settled() -> bool:
            if page.locator("#jobs tbody tr").count() > 1:
                return True  # the superseded answer was drawn: the assertion below says how
            return (page.get_attribute("#jobs", "aria-busy") == "false"
                    and all(request.response() is not None for request in finished))

        wait_until(settled, 10, "the first search's answer to arrive")
    finally:
        page.unroute("**/api/jobs?*", hold_the_others)
    rows = page.locator("#jobs tbody tr")
    assert [rows.nth(i).get_attribute("data-job") for i in range(rows.count())] == [str(job_id)]
    page.click(f"#jobs tr[data-job='{job_id}'] td:first-child")
    page.wait_for_selector(f"#insp-title:has-text('Job {job_id} ')")


# -- issue 28, item 1: jobs by state, with counts ----------------------------------------------


def state_counts(page: playwright_api.Page) -> dict[str, int | None]:
    counts: dict[str, int | None] = {}
    for view in ("running", "due", "limited", "scheduled", "retrying", "held", "dead",
                 "succeeded"):
        text = page.locator(f"#states button[data-view='{view}'] .count").inner_text()
        counts[view] = int(text) if text.isdigit() else None
    return counts


def show_state(page: playwright_api.Page, view: str, queue: str) -> list[str]:
    """The rows of `view` for `queue`, once drawn: their ids (and the headers are the view's)."""
    page.fill("#f-queue", queue)
    page.click(f"#states button[data-view='{view}']")
    page.wait_for_selector(f"#jobs[data-view='{view}'][aria-busy='false']")
    rows = page.locator("#jobs tbody tr")
    return [rows.nth(i).get_attribute("data-job") or "" for i in range(rows.count())]


def headers(page: playwright_api.Page) -> list[str]:
    return page.locator("#jobs thead th").all_inner_texts()


def cells(page: playwright_api.Page, job_id: int) -> dict[str, str]:
    """A row's cells by the header above each."""
    texts = page.locator(f"#jobs tr[data-job='{job_id}'] td").all_inner_texts()
    return dict(zip(headers(page), texts, strict=True))


@pytest.mark.parametrize("width", [800, 1440])
def test_jobs_by_state_each_a_list_with_its_columns_and_a_count(
    page: playwright_api.Page, app: App, width: int
) -> None:
    q = f"st{width}"  # no worker serves these queues: the jobs stay in their state
    tab(page, "jobs")
    if page.locator("#inspector").is_visible():  # an earlier test's job: narrow, it covers all
        page.click("#insp-close")
    page.set_viewport_size({"width": width, "height": 900})
    try:
        for field in ("task", "status", "tag", "text"):
            page.fill(f"#f-{field}", "")
        # the counts before, from the server (the page's may be a second old)
        request = urllib.request.Request(page.url.split("#")[0] + "api/overview",
                                         headers={"authorization": f"Bearer {ADMIN}"})
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - ours
            before = json.loads(response.read())["states"]
        due = app.enqueue("echo", {"n": 1}, queue=q)
        scheduled = app.enqueue("echo", {"n": 2}, queue=q, delay=3600)
        retrying = app.enqueue("echo", {"n": 3}, queue=q + "r")
        [job] = app.claim("browser-states", [q + "r"], start=True)
        assert app.fail(job, RuntimeError("later"),
                        retry=RetryPolicy(base=3600, jitter=0)) == "retried"
        running = app.enqueue("echo", {"n": 4}, queue=q + "g")
        [job] = app.claim("browser-states", [q + "g"], lease=3600, start=True)
        assert app.backend.set_progress(Owned(job.id, job.claim_token or ""), 0.25, "a quarter")
        flow = Workflow("states")
        first = flow.add("echo", {"n": 5}, queue=q + "h", delay=3600)
        flow.add("echo", {"n": 6}, queue=q + "h", after=[first])
        handle = app.enqueue_workflow(flow)
        succeeded = app.enqueue("echo", {"n": 7}, queue=q + "d")
        [job] = app.claim("browser-states", [q + "d"], start=True)
        app.complete(job, None)
        dead = app.enqueue("echo", {"n": 8}, queue=q + "d")
        assert app.cancel(dead) == "cancelled"
        # a concurrency key (a hostile one) at its limit: the next job of the key is limited
        key = f"<b>acct{width}"
        app.enqueue("echo", {"n": 9}, queue=q + "l", concurrency_key=key, concurrency_limit=1)
        [job] = app.claim("browser-states", [q + "l"], lease=3600, start=True)
        limited = app.enqueue("echo", {"n": 10}, queue=q + "l", concurrency_key=key,
                              concurrency_limit=1)
        added = {"running": 2, "due": 1, "limited": 1, "scheduled": 2, "retrying": 1, "held": 1,
                 "dead": 1, "succeeded": 1}
        expected = {k: before[k] + added[k] for k in added}
        wait_until(lambda: state_counts(page) == expected, 15, f"the counts {expected}")

        assert show_state(page, "running", q + "g") == [str(running)]
        row = cells(page, running)
        assert headers(page) == ["Id", "Queue", "Task", "Worker", "Started", "Elapsed",
                                 "Attempt", "Progress"]
        assert (row["Worker"], row["Attempt"]) == ("browser-states", "1/20")
        assert row["Progress"] == "25% a quarter" and row["Started"].endswith(" UTC")
        assert show_state(page, "due", q) == [str(due)]
        assert headers(page)[3:] == ["Run at", "Waiting", "Attempt", "Priority"]
        assert show_state(page, "limited", q + "l") == [str(limited)]
        assert headers(page)[3:] == ["Waits for", "Key", "Due for", "Attempt", "Priority"]
        row = cells(page, limited)
        assert (row["Waits for"], row["Key"]) == ("concurrency key at its limit", key)
        assert page.locator("#jobs b").count() == 0
        assert show_state(page, "due", q + "l") == []
        assert show_state(page, "scheduled", q) == [str(scheduled)]
        assert headers(page)[3:] == ["Run at", "In", "Priority", "Created"]
        assert re.fullmatch(r"\d+\.\d (min|h)", cells(page, scheduled)["In"])
        assert show_state(page, "retrying", q + "r") == [str(retrying)]
        row = cells(page, retrying)
        assert headers(page)[3:] == ["Next attempt at", "In", "Attempt", "Last error"]
        assert (row["Attempt"], row["Last error"]) == ("1/20", "RuntimeError: later")
        assert show_state(page, "held", q + "h") == [str(handle.job_ids[1])]
        assert cells(page, handle.job_ids[1])["Workflow"] == str(handle.id)
        assert show_state(page, "scheduled", q + "h") == [str(handle.job_ids[0])]
        assert show_state(page, "dead", q + "d") == [str(dead)]
        assert cells(page, dead)["Reason"] == "cancelled"
        assert page.locator("#f-table").input_value() == "dead"
        assert show_state(page, "succeeded", q + "d") == [str(succeeded)]
        assert headers(page)[3:] == ["Attempt", "Finished", "Ran"]
        # a row opens the inspector; the list fits the width, the states all in view
        page.click(f"#jobs tr[data-job='{succeeded}'] td:first-child")
        page.wait_for_selector(f"#insp-title:has-text('Job {succeeded} · echo · succeeded')")
        page.keyboard.press("Escape")
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        for view in ("all", *added):
            assert in_view(page, f"#states button[data-view='{view}']"), view
        if SCREENSHOT:
            page.screenshot(path=SCREENSHOT.replace(".png", f"-states-{width}.png"))
        # back to every live job: the plain browser's columns
        page.click("#states button[data-view='all']")
        page.select_option("#f-table", "live")
        page.fill("#f-queue", q)
        page.click("#search")
        page.wait_for_selector(f"#jobs[data-view='all'] tr[data-job='{scheduled}']")
        assert headers(page)[3:] == ["State", "Priority", "Attempts", "Tags", "Created",
                                     "Last error"]
        assert page.locator("#jobs tbody tr").count() == 2
        # the Flow control tab counts the key's jobs held back, running and its limit
        tab(page, "flow")
        held = page.locator(f"#limited tr[data-queue='{q}l']")
        held.wait_for()
        assert [held.locator(f"td.{c}").inner_text()
                for c in ("reason", "key", "waiting", "running", "limit")] == [
            "concurrency key at its limit", key, "1", "1", "1"]
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        tab(page, "jobs")
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})
