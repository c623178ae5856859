-- Queues given jobs with a concurrency key: their claims take claim_flow.sql from now on.
UPDATE {schema}.queues SET keyed = true, updated_at = {now}
WHERE name = ANY(%(names)s::text[]) AND NOT keyed
