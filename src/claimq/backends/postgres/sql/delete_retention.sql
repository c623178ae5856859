DELETE FROM {schema}.retention WHERE queue = %(queue)s RETURNING queue
