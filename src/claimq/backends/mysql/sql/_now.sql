-- A statement's time: the `now` parameter when the backend runs on a test's FakeClock or passes
-- on a time it read already, else NULL, and then the server's clock (UTC_TIMESTAMP is constant
-- within a statement): every host takes its times from the database.
CAST(coalesce(%(now)s, UTC_TIMESTAMP(6)) AS DATETIME(6))
