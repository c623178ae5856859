INSERT INTO claimq_retention (queue, archive_age, archive_rows, dead_age, dead_rows, updated_at)
VALUES (:queue, :archive_age, :archive_rows, :dead_age, :dead_rows, :now)
ON CONFLICT (queue) DO UPDATE
SET archive_age = excluded.archive_age, archive_rows = excluded.archive_rows,
    dead_age = excluded.dead_age, dead_rows = excluded.dead_rows, updated_at = excluded.updated_at
