INSERT INTO {schema}.retention (queue, archive_age, archive_rows, dead_age, dead_rows, updated_at)
VALUES (%(queue)s, %(archive_age)s, %(archive_rows)s, %(dead_age)s, %(dead_rows)s, {now})
ON CONFLICT (queue) DO UPDATE
SET archive_age = EXCLUDED.archive_age, archive_rows = EXCLUDED.archive_rows,
    dead_age = EXCLUDED.dead_age, dead_rows = EXCLUDED.dead_rows, updated_at = EXCLUDED.updated_at
