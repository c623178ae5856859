-- An operator (the dashboard with its admin token, the CLI's queue and job commands): a
-- worker's rights, plus purging and resurrecting finished jobs and writing the audit table.
{read_grants}
{enqueue_grants}
{work_grants}
GRANT DELETE ON {schema}.archive, {schema}.dead TO {role};
GRANT SELECT, INSERT ON {schema}.audit TO {role};
