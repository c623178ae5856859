-- A statement's time: the `now` parameter when the backend runs on a test's FakeClock, else
-- NULL, and then the server's transaction time: every host takes its times from the database,
-- so clocks that disagree between hosts cannot disagree about a lease.
coalesce(%(now)s::timestamptz, now())
