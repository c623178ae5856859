-- A partition past retention leaves the archive (a brief lock of the archive, given up after
-- lock_timeout rather than queueing the workers' completions behind it), then is dropped.
ALTER TABLE {schema}.archive DETACH PARTITION {schema}.{name}
