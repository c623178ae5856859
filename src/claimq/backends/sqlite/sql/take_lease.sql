-- A named lease: taken when free or run out, renewed by its holder, refused to anyone else.
INSERT INTO claimq_leases (name, holder, until) VALUES (:name, :holder, :now + :seconds)
ON CONFLICT (name) DO UPDATE
SET holder = excluded.holder, until = excluded.until
WHERE claimq_leases.holder = excluded.holder OR claimq_leases.until < :now
RETURNING name
