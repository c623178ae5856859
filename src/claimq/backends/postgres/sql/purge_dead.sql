WITH deleted AS (
    DELETE FROM {schema}.dead t
    WHERE (%(older_than)s::float8 IS NULL
           OR finished_at < {now} - make_interval(secs => %(older_than)s::float8))
      AND (%(queue)s::text IS NULL OR queue = %(queue)s)
      AND (%(task)s::text IS NULL OR task = %(task)s)
      AND {workflow_done}
    RETURNING t.id, t.workflow_id
), {workflows_gone}
SELECT count(*) AS n FROM deleted
