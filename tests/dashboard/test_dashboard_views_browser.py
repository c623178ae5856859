"""The dashboard's views of what the CLI shows (issue 28, item 2) in Debian's headless
Chromium, at a narrow (800 px) and a wide (1440 px) viewport, served by a real `claimq
dashboard` process: what each view shows, and its actions."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest
from polling import wait_until
from test_dashboard_browser import (
    ADMIN,
    AUDIT_LOADED,
    CHROMIUM,
    Proc,
    app,
    confirm,
    env,
    server,
    tab,
    worker,
)

from claimq import App, Permanent, Retry, Throttled
from claimq.backends.base import WorkerRecord
from claimq.clock import FakeClock

__all__ = ["app", "env", "server", "worker"]  # the fixtures, shared with test_dashboard_browser

WIDTHS = (800, 1440)


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def page(server: str, request: pytest.FixtureRequest) -> Iterator[playwright_api.Page]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": request.param, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(server)
        page.fill("#token", ADMIN)
        page.click("#login button[type=submit]")
        page.wait_for_selector("#who:has-text('admin')")
        yield page
        browser.close()
        assert errors == []


# The schedules tab's rows once its newest load is answered.
SCHEDULES_LOADED = "#schedules[aria-busy='false'] tbody tr"


def schedule_cells(page: playwright_api.Page, name: str) -> dict[str, str]:
    row = page.locator(f"#schedules tr[data-schedule='{name}']")
    return {cls: row.locator(f"td.{cls}").inner_text()
            for cls in ("task", "when", "state", "next", "last-run", "last-job")}


def within_viewport(page: playwright_api.Page, selector: str) -> bool:
    """The element's right edge is on screen (nothing cut off at this width)."""
    box = page.locator(selector).bounding_box()
    width = page.viewport_size["width"] if page.viewport_size else 0
    return box is not None and box["x"] + box["width"] <= width


def no_page_scroll(page: playwright_api.Page) -> bool:
    return bool(page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"))


def test_schedules_show_their_timing_next_and_last_run_and_act(
        page: playwright_api.Page, app: App) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    often, nightly = f"often{width}", f"nightly{width}"
    app.schedules.add(often, "echo", every=1, queue="pz", payload={"from": often})
    app.schedules.add(nightly, "echo", cron="0 3 * * *", tz="Europe/Lisbon", queue="pz")
    fired = wait_until(lambda: app.schedules.fire_due().get(often), 10, "the first tick")
    app.schedules.pause(often)  # no more ticks: the page's last job stays this one
    tab(page, "schedules")
    page.wait_for_selector(SCHEDULES_LOADED)
    shown = schedule_cells(page, often)
    assert (shown["task"], shown["when"], shown["state"]) == ("echo", "every 1 s", "paused")
    assert shown["last-run"].endswith(" UTC") and shown["next"] == "– (paused)"
    assert shown["last-job"] == f"job {fired[-1]}"
    other = schedule_cells(page, nightly)
    assert (other["when"], other["state"], other["last-job"]) == (
        "cron 0 3 * * * (Europe/Lisbon)", "active", "–")
    next_run = app.schedules.get(nightly).next_run_at
    assert other["next"] == next_run.strftime("%Y-%m-%d %H:%M:%S UTC")
    run_now = f"#schedules tr[data-schedule='{nightly}'] button.schedule-run-now"
    assert within_viewport(page, run_now) and no_page_scroll(page)

    # resume, pause: the page's row follows, the database says the same
    page.click(f"#schedules tr[data-schedule='{nightly}'] button.schedule-pause")
    confirm(page)
    page.wait_for_selector(f"#schedules tr[data-schedule='{nightly}'] td.state:has-text('paused')")
    assert app.schedules.get(nightly).paused is True
    assert "paused" in page.inner_text("#sched-message")
    page.click(f"#schedules tr[data-schedule='{nightly}'] button.schedule-resume")
    confirm(page)
    page.wait_for_selector(f"#schedules tr[data-schedule='{nightly}'] td.state:has-text('active')")
    assert app.schedules.get(nightly).paused is False

    # run now: the message links the job it enqueued, which opens in the inspector
    page.click(f"#schedules tr[data-schedule='{often}'] button.schedule-run-now")
    confirm(page)
    link = page.locator("#sched-message a.job-link")
    link.wait_for()
    job_id = int(link.get_attribute("data-job") or 0)
    job = app.get_job(job_id)
    assert (job.task, job.payload) == ("echo", {"from": often})
    link.click()
    page.wait_for_selector(f"#insp-title:has-text('Job {job_id} ')")
    assert page.locator("#tab-jobs").is_visible()
    page.click("#insp-close")  # at 800 px the panel covers the page, its tabs too

    # the last tick's job, from its row
    tab(page, "schedules")
    page.wait_for_selector(SCHEDULES_LOADED)
    page.click(f"#schedules tr[data-schedule='{often}'] td.last-job a")
    page.wait_for_selector(f"#insp-title:has-text('Job {fired[-1]} ')")
    page.click("#insp-close")

    tab(page, "audit")
    page.wait_for_selector(AUDIT_LOADED)
    rows = page.locator("#audit tbody tr")
    assert [rows.nth(i).locator("td").nth(3).inner_text() for i in range(3)] == [
        "schedule run_now", "schedule resume", "schedule pause"]


# A duration as the page writes it: a number and a unit, never a raw float of seconds.
HUMAN = re.compile(r"^\d+\.\d (s|min|h)$")


def test_workers_show_state_queues_human_times_and_current_jobs(
        page: playwright_api.Page, app: App, worker: Callable[[str], Proc],
        tmp_path: Path) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    everything = f"h:{width}:all-queues"
    app.backend.register_worker(WorkerRecord(everything, "h", width, None, 2, "9"))
    release = tmp_path / "release"
    proc = worker("hold")
    job_id = app.enqueue("hold", {"path": str(release)}, queue="hold")
    wait_until(lambda: proc.alive() and app.get_job(job_id).status == "processing", 30,
               "the worker to run the job")
    tab(page, "workers")
    row = page.locator(f"#worker-list tr:has(li[data-job='{job_id}'])")
    row.wait_for()
    cells = {c: row.locator(f"td.{c}").inner_text()
             for c in ("state", "queues", "up-for", "last-seen", "in-flight")}
    assert (cells["state"], cells["queues"]) == ("alive", "hold")
    assert HUMAN.match(cells["up-for"]), cells
    assert HUMAN.match(cells["last-seen"].removesuffix(" ago")), cells
    item = row.locator(f"li[data-job='{job_id}']")
    assert HUMAN.match(item.locator(".elapsed").inner_text())
    assert "hold" in item.inner_text()
    other = page.locator(f"#worker-list tr[data-worker='{everything}']")
    assert other.locator("td.queues").inner_text() == "all"
    assert other.locator("td.jobs").inner_text() == "–"
    heads = page.locator("#worker-list thead th").all_inner_texts()
    assert heads[:3] == ["Worker", "State", "Host"] and "Current jobs" in heads
    assert not any("_" in h for h in heads)  # no raw field names
    assert no_page_scroll(page)  # a wide table scrolls inside its box, not the page

    # the job opens in the inspector
    item.locator("a.job-link").click()
    page.wait_for_selector(f"#insp-title:has-text('Job {job_id} ')")
    page.click("#insp-close")

    # the overview's table reads the same way, without its jobs
    tab(page, "overview")
    overview = page.locator(f"#workers tr[data-worker='{everything}']")
    overview.wait_for()
    assert overview.locator("td.queues").inner_text() == "all"
    assert "silent_for" not in page.inner_text("#workers thead")

    # the tab follows its workers: the job finished, it is gone from the row
    tab(page, "workers")
    row.wait_for()
    release.touch()
    wait_until(lambda: app.get_job(job_id).status == "succeeded", 30, "the job to finish")
    page.locator(f"#worker-list li[data-job='{job_id}']").wait_for(state="detached")
    app.backend.unregister_worker(everything)


def test_flow_control_shows_limits_throttles_and_breakers(
        page: playwright_api.Page, app: App) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    api, plain, task = f"api{width}", f"plain{width}", f"call{width}"
    app.configure_queue(api, max_workers=3, rate_limit="10/s", rate_burst=20,
                        key_rate_limit="2/m", aging=30, aging_cap=5)
    app.configure_breaker(task, failures=1, window=60, cooldown=120, queue=api)
    app.enqueue(task, {"n": 1}, queue=api, rate_key="c:a")
    app.enqueue(task, {"n": 2}, queue=plain)
    for queue in (api, plain):
        (job,) = app.claim("w", [queue], limit=1, start=True)
        assert app.fail(job, Throttled(after=300), attempt=1) == "retried"
    app.enqueue(task, {"n": 3}, queue=api)
    (job,) = [j for j in app.claim("w", [api], limit=5, start=True) if j.payload["n"] == 3]
    app.fail(job, RuntimeError("down"), attempt=1)

    tab(page, "flow")
    page.wait_for_selector(f"#flow[aria-busy='false'] tr[data-queue='{plain}']")
    row = page.locator(f"#flow tr[data-queue='{api}']")
    cells = {c: row.locator(f"td.{c}").inner_text()
             for c in ("limit", "rate", "key-rate", "aging", "throttled-until", "state")}
    assert cells == {"limit": "3", "rate": "10 per s (burst 20)", "key-rate": "2 per 1 min",
                     "aging": "+1 every 30 s, at most +5", "throttled-until": "–",
                     "state": "active"}
    other = page.locator(f"#flow tr[data-queue='{plain}']")
    assert other.locator("td.state").inner_text() == "throttled"
    stored = next(q for q in app.queues() if q.name == plain).throttled_until
    assert stored is not None
    shown = other.locator("td.throttled-until").inner_text()
    assert shown.startswith(stored.strftime("%Y-%m-%d %H:%M:%S UTC (in "))
    assert HUMAN.match(shown.split("(in ")[1].rstrip(")"))
    key = page.locator(f"#throttled tr[data-queue='{api}'][data-key='c:a']")
    assert key.locator("td.until").inner_text().endswith(" UTC")
    assert HUMAN.match(key.locator("td.in").inner_text())
    breaker = page.locator(f"#flow-breakers tr[data-task='{task}']")
    assert {c: breaker.locator(f"td.{c}").inner_text()
            for c in ("state", "failures", "opens", "cooldown")} == {
        "state": "open", "failures": "1 of 1", "opens": "1 failure in 1 min",
        "cooldown": "2 min"}
    opened = next(b for b in app.breakers() if b.task == task).open_until
    assert opened is not None
    assert breaker.locator("td.open-until").inner_text() == opened.strftime(
        "%Y-%m-%d %H:%M:%S UTC")
    assert no_page_scroll(page)
    # the overview's breakers read the same way (not raw fields)
    tab(page, "overview")
    overview = page.locator(f"#breakers tr[data-task='{task}']")
    overview.wait_for()
    assert overview.locator("td.state").inner_text() == "open"
    assert "failure_limit" not in page.inner_text("#breakers thead")


def test_hostile_names_show_as_text_in_every_view(page: playwright_api.Page, app: App) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    hostile = f"<img src=x onerror=\"window.__pwned = {width}\">"
    task = f"t<b>{width}"  # a task name may hold < and >
    app.schedules.add(f"hostile{width}", task, every=60, queue=f"hq{width}")
    worker_id = f"h:{width}:hostile"
    app.backend.register_worker(WorkerRecord(worker_id, hostile, 1, (f"q<i>{width}",), 1, "9"))
    queue = f"hk{width}"
    app.enqueue(task, {}, queue=queue, rate_key=hostile)
    (job,) = app.claim("w", [queue], limit=1, start=True)
    app.fail(job, Throttled(after=300), attempt=1)
    app.enqueue(task, {}, queue=queue, rate_key=hostile)  # due, held back by its key
    tab(page, "schedules")
    page.wait_for_selector(f"#schedules[aria-busy='false'] tr[data-schedule='hostile{width}']")
    assert page.locator(f"#schedules tr[data-schedule='hostile{width}'] td.task").inner_text() \
        == task
    tab(page, "workers")
    row = page.locator(f"#worker-list tr[data-worker='{worker_id}']")
    row.wait_for()
    assert hostile in row.inner_text() and f"q<i>{width}" in row.inner_text()
    tab(page, "flow")
    key = page.locator(f"#throttled tr[data-queue='{queue}'] td.key")
    key.wait_for()
    assert key.inner_text() == hostile
    held = page.locator(f"#limited tr[data-queue='{queue}'] td.key")
    held.wait_for()
    assert held.inner_text() == hostile
    assert page.locator("main img, main b, main i").count() == 0
    assert page.evaluate("window.__pwned") is None
    app.backend.unregister_worker(worker_id)


def _ran(app: App, clock: FakeClock, queue: str, task: str, wait: float, run: float) -> None:
    """One job that waits `wait` seconds, then runs `run` seconds and completes."""
    app.enqueue(task, {}, queue=queue)
    clock.advance(wait)
    (job,) = app.claim("w", [queue], limit=1, start=True)
    clock.advance(run)
    app.complete(job)


def latency_cells(page: playwright_api.Page, table: str, key: str, name: str) -> dict[str, str]:
    row = page.locator(f"#latency-{table} tr[data-{key}='{name}']")
    return {c: row.locator(f"td.{c}").inner_text()
            for c in ("name", "jobs", "attempts", "wait-p50", "wait-p99", "run-p50", "run-p99")}


def test_latency_per_queue_and_task_over_the_window_chosen(
        page: playwright_api.Page, env: dict[str, str]) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    queue, task, hostile = f"lat{width}", f"send{width}", f"t<b>{width}"
    # jobs finished at known times before now (the dashboard's clock is the real one): one two
    # hours ago (only the 24 h window sees it), then waits of 1..10 s and runs of 0.1..1 s
    clock = FakeClock(start=datetime.now(UTC) - timedelta(hours=2))
    timed = App(env["CLAIMQ_DATABASE_URL"], clock=clock)
    try:
        _ran(timed, clock, queue, task, 100, 50)
        clock.advance(7200 - 150 - 120)
        for i in range(1, 11):
            _ran(timed, clock, queue, task, float(i), i / 10)
        timed.enqueue(hostile, {}, queue=queue)
        (job,) = timed.claim("w", [queue], limit=1, start=True)
        timed.fail(job, Retry(after=0))
        (job,) = timed.claim("w", [queue], limit=1, start=True)
        timed.complete(job)
    finally:
        timed.close()

    tab(page, "latency")
    page.select_option("#latency-window", "300")
    page.wait_for_selector(f"#latency[aria-busy='false'][data-window='300'] "
                           f"tr[data-task='{task}']")
    assert latency_cells(page, "tasks", "task", task) == {
        "name": task, "jobs": "10", "attempts": "1.00", "wait-p50": "5.5 s",
        "wait-p99": "9.9 s", "run-p50": "550 ms", "run-p99": "991 ms"}
    assert latency_cells(page, "tasks", "task", hostile)["attempts"] == "2.00"
    assert latency_cells(page, "queues", "queue", queue)["jobs"] == "11"
    assert no_page_scroll(page)
    # 24 h: the job of two hours ago is in (its 100 s wait and 50 s run are the slowest)
    page.select_option("#latency-window", "86400")
    page.wait_for_selector(f"#latency[aria-busy='false'][data-window='86400'] "
                           f"tr[data-task='{task}']")
    day = latency_cells(page, "tasks", "task", task)
    assert (day["jobs"], day["wait-p50"]) == ("11", "6.0 s")
    assert page.locator("#latency b, main b").count() == 0
    assert page.inner_text("#latency-measured").startswith("Over the 1 d to ")
    page.select_option("#latency-window", "300")


def test_retention_shows_the_default_and_each_queues_policy(
        page: playwright_api.Page, app: App) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    # queue names hold no markup (letters, digits, _ . : -): nothing hostile to show here
    own = f"keep{width}"
    app.set_retention(own, archive_age=90 * 60, archive_rows=25000, dead_age=None)
    tab(page, "retention")
    page.wait_for_selector(f"#retention[aria-busy='false'] tr[data-queue='{own}']")
    cells = ("name", "archive-age", "archive-rows", "dead-age", "dead-rows")

    def shown(queue: str) -> dict[str, str]:
        row = page.locator(f"#retention tr[data-queue='{queue}']")
        return {c: row.locator(f"td.{c}").inner_text() for c in cells}

    # the built-in default (none stored: the other tests' workers prune by it)
    assert shown("*") == {"name": "All queues (default)", "archive-age": "14 d",
                          "archive-rows": "no limit", "dead-age": "30 d",
                          "dead-rows": "no limit"}
    assert shown(own) == {"name": own, "archive-age": "90 min", "archive-rows": "25,000",
                          "dead-age": "no limit", "dead-rows": "no limit"}
    first = page.locator("#retention tbody tr").first.get_attribute("data-queue")
    assert first == "*"
    assert no_page_scroll(page)
    app.clear_retention(own)


def test_history_draws_the_last_hours_from_the_database_at_page_load(
        page: playwright_api.Page, env: dict[str, str], server: str) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    queue, task, hostile = f"hist{width}", f"h{width}", f"t<b>h{width}"
    # finished before the page opened: 2 succeeded and 1 dead 32.5 min ago (the middle of the
    # 66th 5-min bar of 72, whatever the few seconds until the page reads), 1 succeeded 7 h
    # ago (outside 6 h, inside 24 h)
    clock = FakeClock(start=datetime.now(UTC) - timedelta(hours=7))
    timed = App(env["CLAIMQ_DATABASE_URL"], clock=clock)
    try:
        _ran(timed, clock, queue, task, 0, 1)
        clock.set(datetime.now(UTC) - timedelta(minutes=32.5))
        _ran(timed, clock, queue, task, 0, 0)
        _ran(timed, clock, queue, hostile, 0, 0)
        timed.enqueue(hostile, {}, queue=queue)
        (job,) = timed.claim("w", [queue], limit=1, start=True)
        timed.fail(job, Permanent("broken"))
    finally:
        timed.close()
    page.reload()  # a new page: what it shows comes from the database, not from what it saw
    page.wait_for_selector("#who:has-text('admin')")
    figure = page.locator(f"#history[aria-busy='false'][data-hours='6'] "
                          f"#history-queues figure[data-queue='{queue}']")
    figure.wait_for()
    assert (figure.get_attribute("data-succeeded"), figure.get_attribute("data-dead")) == (
        "2", "1")
    assert figure.locator("figcaption").inner_text() == f"{queue}: 2 succeeded, 1 dead"
    bar = figure.locator("g[data-bucket]")
    assert bar.count() == 1
    assert (bar.get_attribute("data-bucket"), bar.get_attribute("data-succeeded"),
            bar.get_attribute("data-dead")) == ("65", "2", "1")
    assert bar.locator("title").text_content().endswith(" UTC: 2 succeeded, 1 dead")
    assert figure.locator("rect.succeeded").bounding_box() is not None
    by_task = page.locator(f"#history-tasks figure[data-task='{hostile}']")
    assert by_task.locator("figcaption").inner_text() == f"{hostile}: 1 succeeded, 1 dead"
    assert page.locator("#history b, main b").count() == 0
    assert no_page_scroll(page)
    page.select_option("#history-hours", "24")
    day = page.locator(f"#history[aria-busy='false'][data-hours='24'] "
                       f"#history-queues figure[data-queue='{queue}']")
    day.wait_for()
    assert day.get_attribute("data-succeeded") == "3"
    page.select_option("#history-hours", "6")
    page.wait_for_selector("#history[aria-busy='false'][data-hours='6']")
