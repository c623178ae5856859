-- After wf_unbury.sql: the rule from there (migration 014's wf_release): restored jobs with
-- nothing to wait for released, and those with a parent dead under 'cancel' buried again
-- (their restored dependents with them).
SELECT {schema}.wf_release(
    '{}',
    ARRAY(SELECT DISTINCT d.parent FROM {schema}.deps d
          JOIN {schema}.dead x ON x.id = d.parent
          WHERE d.child = ANY(%(ids)s::bigint[]) AND NOT d.resolved
            AND d.on_failure = 'cancel'),
    ARRAY(SELECT h.id FROM {schema}.held h
          WHERE h.id = ANY(%(ids)s::bigint[]) AND h.waiting <= 0),
    {now})
