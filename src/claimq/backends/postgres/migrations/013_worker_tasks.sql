-- The task names each worker runs (issue 24): `claimq enqueue` without --app refuses a name
-- that no live worker registers. NULL: a worker that did not say (older).
ALTER TABLE {schema}.workers ADD COLUMN tasks text[];
