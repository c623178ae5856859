"""app.stats() against a large archive (issue 14): 1,000,000 archived jobs finished over the
last day, 50,000 dead letters, 10,000 live jobs; how long one stats() reading takes.

    .venv/bin/python benchmarks/stats_scale.py --database postgresql://postgres@127.0.0.1/test
    .venv/bin/python benchmarks/stats_scale.py --database sqlite:////tmp/stats.db

The rows are written with plain SQL (generate_series / a recursive CTE) into a fresh schema (or
file), spread over 20 queues and 50 tasks, then VACUUM ANALYZE (PostgreSQL) or ANALYZE. Reports
the median and max of --reps readings for the default 5-minute window and for a 1-hour one
(about 3,500 and 42,000 archived rows fall in them). Writes
benchmarks/results/stats-scale-<kind>.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from claimq import App

ARCHIVED = 1_000_000
DEAD = 50_000
LIVE = 10_000
DAY = 86_400

PG_FILL = """
INSERT INTO {s}.archive (id, queue, task, payload, tags, priority, attempts, max_attempts,
                         worker_id, run_at, created_at, started_at, finished_at, duration,
                         errors)
SELECT i, 'q' || (i % 20), 't' || (i % 50), '{{}}', '{{}}', 0, 1 + (i % 3 = 0)::int, 20, 'w',
       f - interval '3 s', f - interval '3 s', f - interval '1 s', f, 1, '[]'
FROM (SELECT i, now() - (i * {day}.0 / {n}) * interval '1 s' AS f
      FROM generate_series(1, {n}) i) g;
INSERT INTO {s}.dead (id, queue, task, payload, tags, priority, attempts, max_attempts,
                      run_at, created_at, finished_at, reason, errors)
SELECT {n} + i, 'q' || (i % 20), 't' || (i % 50), '{{}}', '{{}}', 0, 3, 3,
       now() - i * interval '1 s', now() - i * interval '1 s', now() - i * interval '1 s',
       (ARRAY['retries_exhausted', 'permanent_error', 'cancelled', 'timeout'])[1 + i % 4], '[]'
FROM generate_series(1, {dead}) i;
INSERT INTO {s}.jobs (queue, task, payload, run_at)
SELECT 'q' || (i % 20), 't' || (i % 50), '{{}}', now() - (i % 600) * interval '1 s'
FROM generate_series(1, {live}) i;
"""

SQLITE_FILL = """
WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {n})
INSERT INTO claimq_archive (id, queue, task, payload, tags, priority, attempts, max_attempts,
                            worker_id, run_at, created_at, started_at, finished_at, duration,
                            errors)
SELECT i, 'q' || (i % 20), 't' || (i % 50), '{{}}', '[]', 0, 1 + (i % 3 = 0), 20, 'w',
       {now} - i * {day}.0 / {n} - 3, {now} - i * {day}.0 / {n} - 3,
       {now} - i * {day}.0 / {n} - 1, {now} - i * {day}.0 / {n}, 1, '[]' FROM g;
WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {dead})
INSERT INTO claimq_dead (id, queue, task, payload, tags, priority, attempts, max_attempts,
                         run_at, created_at, finished_at, reason, errors)
SELECT {n} + i, 'q' || (i % 20), 't' || (i % 50), '{{}}', '[]', 0, 3, 3, {now} - i, {now} - i,
       {now} - i,
       CASE i % 4 WHEN 0 THEN 'retries_exhausted' WHEN 1 THEN 'permanent_error'
                  WHEN 2 THEN 'cancelled' ELSE 'timeout' END, '[]' FROM g;
WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {live})
INSERT INTO claimq_jobs (queue, task, payload, run_at, created_at, updated_at)
SELECT 'q' || (i % 20), 't' || (i % 50), '{{}}', {now} - i % 600, {now}, {now} FROM g;
"""


def fill(app: App) -> float:
    backend = app.backend
    started = time.perf_counter()
    if backend.kind == "postgresql":
        text = PG_FILL.format(s=backend.schema, n=ARCHIVED, dead=DEAD, live=LIVE, day=DAY)
        for statement in filter(str.strip, text.split(";")):
            backend.run_sql(statement)
        for table in ("archive", "dead", "jobs", "queues"):
            backend.run_sql(f"VACUUM ANALYZE {backend.schema}.{table}")
    else:
        text = SQLITE_FILL.format(n=ARCHIVED, dead=DEAD, live=LIVE, day=DAY, now=time.time())
        for statement in filter(str.strip, text.split(";")):
            backend.run_sql(statement)
        backend.run_sql("ANALYZE")
    return time.perf_counter() - started


def plans(app: App) -> dict[str, list[str]]:
    """The indexes each stats query's plan reads (EXPLAIN), as evidence it stays indexed."""
    from claimq.backends._sqlfiles import load_queries

    backend = app.backend
    pg = backend.kind == "postgresql"
    queries = load_queries(f"claimq.backends.{'postgres' if pg else 'sqlite'}",
                           backend.schema if pg else None)
    found = {}
    for name in ("stats_recent", "stats_latency", "stats_dead", "stats_live"):
        sql = getattr(queries, name)
        if pg:
            sql = sql.replace("%(now)s", "NULL").replace("%(window)s", "300")
            lines = [r[0] for r in backend.run_sql("EXPLAIN " + sql)]
        else:
            sql = sql.replace(":now", str(time.time())).replace(":since", str(time.time() - 300))
            lines = [r[3] for r in backend.run_sql("EXPLAIN QUERY PLAN " + sql)]
        found[name] = [ln.strip() for ln in lines if "Index" in ln or "INDEX" in ln
                       or "Seq Scan" in ln or "SCAN" in ln]
    return found


def readings(app: App, window: float, reps: int) -> list[float]:
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        stats = app.stats(window)
        times.append(time.perf_counter() - started)
    assert len(stats.queues) == 20 and len(stats.tasks) == 50
    assert sum(q.pending for q in stats.queues) == LIVE
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    url = args.database
    schema = f"stats_{uuid.uuid4().hex[:8]}"
    if url.startswith("postgresql"):
        url += ("&" if "?" in url else "?") + f"schema={schema}"
    app = App(url)
    app.migrate()
    try:
        fill_seconds = fill(app)
        result: dict[str, object] = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "backend": app.backend.kind,
            "machine": f"{platform.machine()}, {platform.python_version()}",
            "rows": {"archive": ARCHIVED, "dead": DEAD, "live": LIVE},
            "fill_seconds": round(fill_seconds, 1),
            "plans": plans(app),
        }
        for label, window in (("window_5min", 300.0), ("window_1h", 3600.0)):
            times = readings(app, window, args.reps)
            result[label] = {"median_ms": round(statistics.median(times) * 1000, 1),
                             "max_ms": round(max(times) * 1000, 1), "reps": args.reps}
            print(f"{app.backend.kind} stats(window={window:.0f}s): median "
                  f"{statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms")
        out = Path(__file__).parent / "results" / f"stats-scale-{app.backend.kind}.json"
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out}")
    finally:
        if app.backend.kind == "postgresql":
            app.backend.run_sql(f"DROP SCHEMA {app.backend.schema} CASCADE")
        app.close()


if __name__ == "__main__":
    main()
