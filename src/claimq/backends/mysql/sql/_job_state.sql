-- A live job's state with flow control: _live_state.sql's, except that a due job flow control
-- holds back (_limited.sql) is 'limited', not 'due'. On a row of claimq_jobs named `j`.
CASE WHEN {live_state} = 'due' AND {limited} IS NOT NULL THEN 'limited' ELSE {live_state} END
