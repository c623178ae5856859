-- A live job's state as the dashboard lists them (find_jobs' `state`, count_states): running
-- (claimed), held (a workflow job waiting for its dependencies), due (pending, its run_at come),
-- retrying (pending after at least one attempt, waiting for its run_at: a retry's backoff),
-- scheduled (pending, never attempted, its run_at ahead). Of the due jobs, find and count
-- tell the limited ones apart (_limited.sql: _in_state.sql, count_states.sql).
CASE WHEN status IN ('fetched', 'processing') THEN 'running'
     WHEN status <> 'pending' THEN status
     WHEN run_at <= :now THEN 'due'
     WHEN attempts > 0 THEN 'retrying'
     ELSE 'scheduled' END
