-- Spawn: the held rows of the jobs that wait for the spawner, locked by id (their waiting and
-- their edges change; a second spawner of one of them waits here).
SELECT id FROM claimq_held
WHERE id IN (SELECT child FROM claimq_deps WHERE parent = %(id)s)
ORDER BY id
FOR UPDATE
