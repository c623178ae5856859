-- Every action an operator takes through the dashboard: who, what, on which filter or ids, and
-- how many rows it changed.
CREATE TABLE claimq_audit (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       REAL NOT NULL,
    actor    TEXT NOT NULL,
    action   TEXT NOT NULL,
    target   TEXT NOT NULL,
    detail   TEXT NOT NULL DEFAULT '{}',
    affected INTEGER NOT NULL
);
