SELECT * FROM claimq_audit
WHERE (%(before)s IS NULL OR id < %(before)s)
ORDER BY id DESC
LIMIT %(limit)s
