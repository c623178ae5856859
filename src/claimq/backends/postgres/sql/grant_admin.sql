-- An operator (the dashboard with its admin token, the CLI's queue and job commands): a
-- worker's rights, plus purging and resurrecting finished jobs and writing the audit table.
{read_grants}
{enqueue_grants}
{work_grants}
-- DELETE to purge; UPDATE because pruning locks its batch (FOR UPDATE SKIP LOCKED).
GRANT UPDATE, DELETE ON {schema}.archive, {schema}.dead TO {role};
GRANT SELECT, INSERT ON {schema}.audit TO {role};
-- Pruning also drops rate buckets full again and audit entries past the App's audit_age.
GRANT DELETE ON {schema}.rate_keys, {schema}.audit TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON {schema}.schedules, {schema}.retention,
    {schema}.breakers TO {role};
-- Workflows: a resurrect restores a workflow's cancelled jobs to held and re-resolves their
-- edges; pruning drops a finished workflow's row and edges.
GRANT UPDATE, DELETE ON {schema}.workflows, {schema}.deps TO {role};
