-- A workflow's jobs just enqueued (`ids`, in this transaction): each gets the workflow, and
-- those with dependencies (`held`, with how many each waits for and its run_if) move to held.
WITH waits AS (
    SELECT * FROM unnest(%(held)s::bigint[], %(waiting)s::int[], %(run_if)s::text[])
             AS w(id, waiting, run_if)
), tagged AS (
    UPDATE {schema}.jobs j SET workflow_id = %(workflow)s
    WHERE j.id = ANY(%(ids)s::bigint[]) AND j.id <> ALL(%(held)s::bigint[])
), moved AS (
    DELETE FROM {schema}.jobs j USING waits w
    WHERE j.id = ANY(%(held)s::bigint[]) AND j.id = w.id
    RETURNING j.*, w.waiting AS new_waiting, w.run_if AS new_run_if
)
INSERT INTO {schema}.held ({job_columns}, workflow_id, waiting, run_if)
SELECT {job_columns}, %(workflow)s, new_waiting, new_run_if FROM moved
