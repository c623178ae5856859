-- Whether live job `j` is in state %(state)s (find_jobs' `state`): _live_state.sql's, except
-- that a due job flow control holds back (_limited.sql) is 'limited', not 'due'. The limit is
-- asked of due jobs only, and only when the state asked for is due or limited.
({live_state} = %(state)s AND %(state)s <> 'due'
 OR %(state)s IN ('due', 'limited') AND {live_state} = 'due'
    AND CASE WHEN NOT {may_be_limited} OR {limited} IS NULL THEN 'due'
             ELSE 'limited' END = %(state)s)
