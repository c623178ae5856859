DELETE FROM claimq_idempotency WHERE `key` IN %(keys)s
