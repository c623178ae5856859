-- Every action an operator takes through the dashboard: who, what, on which filter or ids, and
-- how many rows it changed.
CREATE TABLE {schema}.audit (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at       timestamptz NOT NULL DEFAULT now(),
    actor    text NOT NULL,
    action   text NOT NULL,
    target   text NOT NULL,
    detail   jsonb NOT NULL DEFAULT '{}',
    affected bigint NOT NULL
);
