-- Resurrect: edges' resolved flags re-derived, one value per statement: %(pairs)s is
-- ((child, parent), ...) (at least two: one row constructor alone is not read as a list).
-- By primary key only: a completion's out_edges.sql locks its edges' (parent) index
-- entries first, so reading them here too would deadlock with it.
UPDATE claimq_deps FORCE INDEX (PRIMARY) SET resolved = %(resolved)s WHERE (child, parent) IN %(pairs)s
