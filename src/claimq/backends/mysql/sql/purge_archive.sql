DELETE FROM claimq_archive
WHERE (%(older_than_us)s IS NULL
       OR finished_at < TIMESTAMPADD(MICROSECOND, -%(older_than_us)s, {now}))
  AND (%(queue)s IS NULL OR queue = %(queue)s)
  AND (%(task)s IS NULL OR task = %(task)s)
