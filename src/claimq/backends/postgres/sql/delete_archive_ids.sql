DELETE FROM {schema}.archive WHERE id = ANY (%(ids)s::bigint[])
RETURNING id
