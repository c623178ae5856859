-- Clears dead entries out of the claim index. SKIP_LOCKED: when another worker's vacuum (or
-- autovacuum) already runs on the table, this one does nothing rather than wait.
VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON) {schema}.jobs
