-- Edges counted by the release rule: %(pairs)s is ((child, parent), ...) (at least two: one
-- row constructor alone is not read as a list). Only these edges' rows are read and locked:
-- another transaction's edges into the same child stay free.
UPDATE claimq_deps SET resolved = TRUE WHERE (child, parent) IN %(pairs)s
