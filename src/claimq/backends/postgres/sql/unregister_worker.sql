DELETE FROM {schema}.workers WHERE id = %(id)s RETURNING id
