-- A named lease nobody holds (renew_lease.sql matched no row): taken, unless another holder's
-- row is there (then nothing is inserted: the lease is refused).
INSERT IGNORE INTO claimq_leases (name, holder, until)
VALUES (%(name)s, %(holder)s, TIMESTAMPADD(MICROSECOND, %(seconds_us)s, {now}))
