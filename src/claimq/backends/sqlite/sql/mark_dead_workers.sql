UPDATE claimq_workers SET dead_at = :now
WHERE dead_at IS NULL AND last_seen_at < :now - :dead_after
