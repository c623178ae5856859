-- A resurrect's restored jobs (`ids`): their parents that are live (in jobs or held) locked
-- against finishing (FOR KEY SHARE: a completion, failure or cancel deletes the row and waits;
-- a heartbeat does not) until the resurrect commits. A parent that finished meanwhile has
-- committed by the end of this statement: wf_unbury.sql (the next one) sees where it ended,
-- and one still live finishes after the restore, counting down its restored dependent.
-- The restored jobs themselves: an advisory lock each (key: the job id modulo 2^31 in the
-- namespace `lock`), in id order, which cancel() waits for (shared) before it looks: a cancel
-- of a job being restored sees it where the resurrect left it, not as the dead letter it was.
WITH restoring AS (
    SELECT pg_advisory_xact_lock(%(lock)s, (id %% 2147483648)::int)
    FROM unnest(%(ids)s::bigint[]) AS id
    ORDER BY id
), parents AS (
    SELECT DISTINCT d.parent FROM {schema}.deps d WHERE d.child = ANY(%(ids)s::bigint[])
), live AS (
    SELECT j.id FROM {schema}.jobs j WHERE j.id IN (SELECT parent FROM parents)
    ORDER BY j.id FOR KEY SHARE
), waiting AS (
    SELECT h.id FROM {schema}.held h WHERE h.id IN (SELECT parent FROM parents)
    ORDER BY h.id FOR KEY SHARE
)
SELECT (SELECT count(*) FROM restoring) + (SELECT count(*) FROM live)
       + (SELECT count(*) FROM waiting) AS locked
