-- Every action an operator takes through the dashboard: who, what, on which filter or ids, and
-- how many rows it changed. The id (AUTO_INCREMENT) orders the entries.
CREATE TABLE claimq_audit (
    id       BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    at       DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    actor    VARCHAR(255) NOT NULL,
    action   VARCHAR(64) NOT NULL,
    target   LONGTEXT NOT NULL,
    detail   LONGTEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail)),
    affected BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
