-- A read-only client (the dashboard with only a read token, `claimq stats`, `jobs list`): it can
-- look at everything and change nothing.
{read_grants}
GRANT SELECT ON {schema}.audit TO {role};
