"""The dashboard's job browser on 1,000,000 archived rows (PostgreSQL): App.find_jobs pages by
id (keyset), so a page costs the same at any depth; a filter that matches rarely reads more
rows, and the text filter reads them all. Best of 5 (text: of 3), 2-core machine shared with
other work, PostgreSQL 15, 2026-12-01:

| query | rows | time |
| --- | --- | --- |
| first page, no filter | 51 | 0.8 ms |
| deep page (before=500000) | 51 | 0.8 ms |
| queue filter (1 in 10) | 51 | 0.9 ms |
| task+queue (1 in 70) | 51 | 3.2 ms |
| tag filter (1 in 1000) | 51 | 13.3 ms |
| text filter (10 matches in 1M) | 10 | 1321.6 ms |

Run: `python benchmarks/dashboard_paging.py` (CLAIMQ_TEST_PG_URL, default the test database).
"""

import os
import time
import uuid

import psycopg

from claimq import App

base = os.environ.get("CLAIMQ_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/claimq_test")
schema = f"bench_{uuid.uuid4().hex[:8]}"
app = App(f"{base}?schema={schema}")
app.migrate()
N = 1_000_000
with psycopg.connect(base, autocommit=True) as c:
    t = time.perf_counter()
    c.execute(f"""
        INSERT INTO {schema}.archive (id, queue, task, payload, tags, priority, attempts,
                                      max_attempts, run_at, created_at, started_at,
                                      finished_at, errors)
        SELECT g, 'q' || (g % 10), 't' || (g % 7),
               jsonb_build_object('n', g, 'word',
                                  CASE WHEN g % 100000 = 0 THEN 'needle' ELSE 'hay' END),
               CASE WHEN g % 1000 = 0 THEN ARRAY['rare'] ELSE ARRAY['common'] END, 0, 1, 20,
               now(), now(), now(), now(), '[]'::jsonb
        FROM generate_series(1, {N}) g""")
    c.execute(f"ANALYZE {schema}.archive")
    print("load", round(time.perf_counter() - t, 1), "s")


def best(f, n=5):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t)
    return min(ts) * 1000, len(r)


cases = {
  "first page, no filter": lambda: app.find_jobs("archive", limit=51),
  "deep page (before=500000)": lambda: app.find_jobs("archive", before=500_000, limit=51),
  "queue filter (1 in 10)": lambda: app.find_jobs("archive", queue="q3", limit=51),
  "task+queue (1 in 70)": lambda: app.find_jobs("archive", queue="q3", task="t2", limit=51),
  "tag filter (1 in 1000)": lambda: app.find_jobs("archive", tag="rare", limit=51),
  "text filter (10 matches in 1M)": lambda: app.find_jobs("archive", text="needle", limit=51),
}
for name, f in cases.items():
    ms, n = best(f, 3 if "text" in name else 5)
    print(f"| {name} | {n} | {ms:.1f} ms |")
app.close()
with psycopg.connect(base, autocommit=True) as c:
    c.execute(f"DROP SCHEMA {schema} CASCADE")
