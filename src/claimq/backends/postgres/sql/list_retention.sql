SELECT queue, archive_age, archive_rows, dead_age, dead_rows FROM {schema}.retention ORDER BY queue
