DELETE FROM claimq_workers WHERE dead_at IS NOT NULL AND last_seen_at < :now - :forget_after
