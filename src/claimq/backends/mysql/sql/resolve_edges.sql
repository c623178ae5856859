-- Edges counted by the release rule: %(pairs)s is ((child, parent), ...) (at least two: one
-- row constructor alone is not read as a list). Only these edges' rows are read and locked:
-- another transaction's edges into the same child stay free. By primary key only: a
-- completion's out_edges.sql locks its edges' (parent) index entries first, so reading
-- them here too would deadlock with it.
UPDATE claimq_deps FORCE INDEX (PRIMARY) SET resolved = TRUE WHERE (child, parent) IN %(pairs)s
