-- delete_finished: the dead letters among the ids, locked until their DELETE.
SELECT id FROM claimq_dead WHERE id IN %(ids)s FOR UPDATE
