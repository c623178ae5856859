INSERT INTO {schema}.deps (child, parent, workflow_id, position, on_failure)
SELECT child, parent, %(workflow)s, position, on_failure
FROM unnest(%(child)s::bigint[], %(parent)s::bigint[], %(position)s::int[],
            %(on_failure)s::text[]) AS e(child, parent, position, on_failure)
