-- What every client reads: the schema, its version, the queues and the job tables.
GRANT USAGE ON SCHEMA {schema} TO {role};
GRANT SELECT ON {schema}.migrations, {schema}.queues, {schema}.jobs, {schema}.archive,
    {schema}.dead, {schema}.schedules, {schema}.retention, {schema}.progress,
    {schema}.workers, {schema}.breakers, {schema}.rate_keys, {schema}.workflows,
    {schema}.deps, {schema}.held TO {role};
