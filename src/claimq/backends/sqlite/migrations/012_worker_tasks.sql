-- The task names each worker runs (issue 24): `claimq enqueue` without --app refuses a name
-- that no live worker registers. A JSON array; NULL: a worker that did not say (older).
ALTER TABLE claimq_workers ADD COLUMN tasks TEXT;
