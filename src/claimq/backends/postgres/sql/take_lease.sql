-- A named lease: taken when free or run out, renewed by its holder, refused to anyone else.
INSERT INTO {schema}.leases AS l (name, holder, until)
VALUES (%(name)s, %(holder)s, {now} + make_interval(secs => %(seconds)s))
ON CONFLICT (name) DO UPDATE
SET holder = EXCLUDED.holder, until = EXCLUDED.until
WHERE l.holder = EXCLUDED.holder OR l.until < {now}
RETURNING name
