-- The concurrency keys with jobs fetched or processing, per queue, and how many (`running`):
-- one read of the running jobs (an index of them per queue), for the statements that apply
-- _key_limited.sql's concurrency test to many due jobs at once (count_states, list_limited).
(SELECT r.queue, r.concurrency_key, count(*)::integer AS running FROM {schema}.jobs r
 WHERE r.status IN ('fetched', 'processing') AND r.concurrency_key IS NOT NULL
 GROUP BY r.queue, r.concurrency_key)
