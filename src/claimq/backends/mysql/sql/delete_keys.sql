-- The keys prune_idempotency.sql locked, each still free by the rule (_key_held.sql): a job
-- resurrected after the selection holds its key again (the key's row was locked, its job's
-- rows were not), and READ COMMITTED lets this statement see it.
DELETE k FROM claimq_idempotency k
WHERE k.`key` IN %(keys)s AND NOT {key_held}
