INSERT INTO claimq_retention (queue, archive_age, archive_rows, dead_age, dead_rows, updated_at)
VALUES (%(queue)s, %(archive_age)s, %(archive_rows)s, %(dead_age)s, %(dead_rows)s, {now})
ON DUPLICATE KEY UPDATE
    archive_age = VALUES(archive_age), archive_rows = VALUES(archive_rows),
    dead_age = VALUES(dead_age), dead_rows = VALUES(dead_rows), updated_at = VALUES(updated_at)
