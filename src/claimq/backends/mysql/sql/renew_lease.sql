-- A named lease, first step: renewed by its holder, or taken over once it ran out (the row
-- count is the rows matched: CLIENT_FOUND_ROWS). No row matched: take_lease.sql.
UPDATE claimq_leases
SET holder = %(holder)s, until = TIMESTAMPADD(MICROSECOND, %(seconds_us)s, {now})
WHERE name = %(name)s AND (holder = %(holder)s OR until < {now})
