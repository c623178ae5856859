-- Rows silent past `dead_after` seconds are marked dead.
UPDATE claimq_workers SET dead_at = {now}
WHERE dead_at IS NULL AND last_seen_at < {now} - INTERVAL %(dead_after_us)s MICROSECOND
