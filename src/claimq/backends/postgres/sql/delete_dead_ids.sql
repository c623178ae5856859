DELETE FROM {schema}.dead WHERE id = ANY (%(ids)s::bigint[])
RETURNING id
