-- cancel's move to dead letters, shared by cancel.sql and cancel_workflow.sql: of `target` (the
-- locked live rows), the pending and fetched ones, and every row of `held` (the held rows the
-- query deleted), go to dead letters as 'cancelled'. The trigger dead_wf_release then applies the
-- workflow's rule to their dependents.
gone AS (
    DELETE FROM {schema}.jobs j USING target t
    WHERE j.id = t.id AND t.status IN ('pending', 'fetched')
    RETURNING j.*
), buried AS (
    INSERT INTO {schema}.dead ({dead_columns}, run_if, finished_at, reason, errors)
    SELECT {dead_columns}, NULL, {now}, 'cancelled', errors
    FROM gone
    UNION ALL
    SELECT {dead_columns}, run_if, {now}, 'cancelled', errors
    FROM held
    RETURNING id
)
