-- Rows silent past `dead_after` seconds are marked dead; past `forget_after`, deleted (a row
-- marked in this statement is deleted at the earliest by the next one).
WITH marked AS (
    UPDATE {schema}.workers SET dead_at = {now}
    WHERE dead_at IS NULL AND last_seen_at < {now} - make_interval(secs => %(dead_after)s)
    RETURNING id
), deleted AS (
    DELETE FROM {schema}.workers
    WHERE dead_at IS NOT NULL
      AND last_seen_at < {now} - make_interval(secs => %(forget_after)s)
    RETURNING id
)
SELECT (SELECT count(*) FROM marked) AS marked, (SELECT count(*) FROM deleted) AS deleted
