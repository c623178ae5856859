-- Rows marked dead and silent past `forget_after` seconds are deleted (run before
-- mark_dead_workers: a row marked now is deleted at the earliest by the next prune).
DELETE FROM claimq_workers
WHERE dead_at IS NOT NULL
  AND last_seen_at < {now} - INTERVAL %(forget_after_us)s MICROSECOND
