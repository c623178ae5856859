-- A queue's per-key rate limit changed: every key's bucket starts full (its throttle stays).
UPDATE claimq_rate_keys SET tat = NULL WHERE queue = %(name)s AND tat IS NOT NULL
