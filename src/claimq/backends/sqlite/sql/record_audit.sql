INSERT INTO claimq_audit (at, actor, action, target, detail, affected)
VALUES (:now, :actor, :action, :target, :detail, :affected)
RETURNING id
