-- Resurrect: every edge into these jobs, locked (as out_edges.sql locks a finishing parent's),
-- so that a parent read as live cannot finish before the resurrect commits: its completion
-- waits here, then sees the edge unresolved and its child held. Only the edges are locked;
-- their parents' places are read by parent_places.sql, a statement of its own that starts
-- after these locks were granted (it sees what a completion that held them committed).
SELECT parent, child, on_failure FROM claimq_deps
WHERE child IN %(ids)s
ORDER BY child, parent
FOR UPDATE
