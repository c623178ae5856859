"""The dashboard's jobs by state on 1,000,000 live jobs (PostgreSQL): the counts the event
stream reads every second (App.count_states, beside App.queues which the stream read already)
and a state's first page (App.find_jobs(state=...), newest id first: a rare state reads more
rows). Mix: 94% due, 5% scheduled, 1% running, 0.1% retrying. Best of 5.

2-core machine shared with other work (load average 16 during the run: compare the rows
with each other, not with other files), PostgreSQL 15, 2026-12-03:

| query | rows | time |
| --- | --- | --- |
| App.queues() (the stream's, before) | 10 | 320.6 ms |
| App.count_states() (added to the stream) | 13 | 256.8 ms |
| find_jobs(state='due'), first page | 51 | 1.5 ms |
| find_jobs(state='scheduled'), first page | 51 | 1.4 ms |
| find_jobs(state='running'), first page | 51 | 2.3 ms |
| find_jobs(state='retrying'), first page | 51 | 16.0 ms |
| find_jobs(state='held'), first page | 0 | 373.2 ms |

With the "limited" state (issue 28), same mix, no key held back (2026-12-03, lighter load):

| query | rows | time |
| --- | --- | --- |
| App.queues() (the stream's, before) | 10 | 191.0 ms |
| App.count_states() (added to the stream) | 13 | 207.5 ms |
| find_jobs(state='due'), first page | 51 | 2.9 ms |
| find_jobs(state='limited'), first page | 0 | 401.4 ms |
| find_jobs(state='scheduled'), first page | 51 | 1.5 ms |
| find_jobs(state='running'), first page | 51 | 2.5 ms |
| find_jobs(state='retrying'), first page | 51 | 13.7 ms |
| find_jobs(state='held'), first page | 0 | 259.4 ms |
| App.limited() | 0 | 24.3 ms |

Measured once by hand on that data with keys held back (not scripted here): 100,000 due jobs
with concurrency keys, 10,000 of them waiting on one key with 1,000 running, 100,000 with rate
keys of which 20,000 on a throttled key: count_states 468 ms (App.queues() 215 ms), the
limited page 99 ms, App.limited() 328 ms. These reads run without JIT on PostgreSQL
(no_jit.sql): with it, compiling their subplans took seconds.

Run: `python benchmarks/dashboard_states.py` (CLAIMQ_TEST_PG_URL, default the test database).
"""

import os
import time
import timeit
import uuid

import psycopg

from claimq import App
from claimq.backends.base import LIVE_STATES

base = os.environ.get("CLAIMQ_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/claimq_test")
schema = f"bench_{uuid.uuid4().hex[:8]}"
app = App(f"{base}?schema={schema}")
app.migrate()
for q in range(10):
    app.configure_queue(f"q{q}")
N = 1_000_000
with psycopg.connect(base, autocommit=True) as c:
    t = time.perf_counter()
    c.execute(f"""
        INSERT INTO {schema}.jobs (id, queue, task, payload, status, attempts, worker_id,
                                   lease_until, run_at, started_at)
        SELECT g, 'q' || (g % 10), 't' || (g % 7), jsonb_build_object('n', g),
               CASE WHEN g % 100 = 2 THEN 'processing' ELSE 'pending' END,
               CASE WHEN g % 1000 = 0 OR g % 100 = 2 THEN 1 ELSE 0 END,
               CASE WHEN g % 100 = 2 THEN 'w' END,
               CASE WHEN g % 100 = 2 THEN now() + interval '1 hour' END,
               CASE WHEN g % 1000 = 0 OR g % 20 = 1 THEN now() + interval '1 hour'
                    ELSE now() END,
               CASE WHEN g % 100 = 2 THEN now() END
        FROM generate_series(1, {N}) g""")
    c.execute(f"SELECT setval('{schema}.job_ids', {N})")
    c.execute(f"ANALYZE {schema}.jobs")
    print("load", round(time.perf_counter() - t, 1), "s")


cases = {
    "App.queues() (the stream's, before)": lambda: app.queues(),
    "App.count_states() (added to the stream)": lambda: app.count_states(),
    **{f"find_jobs(state={s!r}), first page": (lambda s=s: app.find_jobs("live", state=s,
                                                                          limit=51))
       for s in ("due", "limited", "scheduled", "running", "retrying", "held")
       if s in LIVE_STATES},
    **({"App.limited()": lambda: app.limited()} if hasattr(app, "limited") else {}),
}
print("| query | rows | time |\n| --- | --- | --- |")
for name, f in cases.items():
    ms = min(timeit.repeat(f, number=1, repeat=5)) * 1000
    print(f"| {name} | {len(f())} | {ms:.1f} ms |")
app.close()
with psycopg.connect(base, autocommit=True) as c:
    c.execute(f"DROP SCHEMA {schema} CASCADE")
