-- For the rest of this transaction, no JIT: the dashboard's reads by state ask flow control's
-- rule (_limited.sql) through subplans whose compiling costs more than the read itself (on 1M
-- jobs: a count of states in 0.3 s took 2 s with JIT, a first page of due jobs 1 s for 0.3 ms).
SELECT set_config('jit', 'off', true)
