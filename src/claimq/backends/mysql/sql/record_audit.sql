-- The new entry's id is the insert's AUTO_INCREMENT value (the cursor's lastrowid).
INSERT INTO claimq_audit (at, actor, action, target, detail, affected)
VALUES ({now}, %(actor)s, %(action)s, %(target)s, %(detail)s, %(affected)s)
