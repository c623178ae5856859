-- Resurrect: edges' resolved flags re-derived, one value per statement: %(pairs)s is
-- ((child, parent), ...) (at least two: one row constructor alone is not read as a list).
UPDATE claimq_deps SET resolved = %(resolved)s WHERE (child, parent) IN %(pairs)s
