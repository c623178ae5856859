DELETE FROM {schema}.schedules WHERE name = %(name)s RETURNING name
