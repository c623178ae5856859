-- A bounded batch of audit entries older than the App's audit_age (the pruner), oldest first.
DELETE FROM claimq_audit
WHERE at < TIMESTAMPADD(MICROSECOND, -%(age_us)s, {now})
ORDER BY id
LIMIT %(batch)s
