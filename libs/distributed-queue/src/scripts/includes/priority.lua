-- Priorities (issue 28): a task's priority is 0 (the default, the most urgent) to 1000; a lower number goes
-- first. It is kept in the task's record (flag 'p<n>', see record.lua), not in its waiting-set member.
-- A task waits in the waiting set by its due time whatever its priority, so a delayed task enters its
-- priority when it falls due. The reserve (take-15.lua) then moves ("promotes") a due task of priority p > 0
-- into the turn queue: a chunked set of the same shape as the waiting set (see waiting-set.lua) at base
-- <ws>:q, scored by the task's turn, due + p * M, where M is the type's agingMs (limits field 'ag'), or, with
-- no aging, 2^42 ms (past any due time: every task of a more urgent level goes first). Tasks of priority 0
-- are never promoted: their turn is their due time. Among due tasks the one with the earliest turn starts
-- first, FIFO at equal turns; with aging, a task that waited agingMs longer than another is served as if
-- one level more urgent, and so on (its turn is fixed when it falls due; no rescoring).
--   ZSET <ws>:q and its chunks <ws>:q:<tag>, STRING <ws>:q:n  the turn queue (due tasks of priority > 0)
--   HASH <ws>:pc   priority -> waiting tasks (delayed or ready) of that priority > 0 (fields at 0 removed)
-- NOTE: keys built from the waiting set's name, so the slot guard of waiting-set.lua covers them too.
--- @include "includes/waiting-set"

local PRIORITY_SPAN = 4398046511104 -- 2^42 ms (year 2109): turns stay exact doubles up to priority 1000 * 2^42 < 2^53

local function turnsOf(ws)
  return ws .. ':q'
end

-- The type's aging step (ms) from its limits hash, or the span of no aging.
local function agingStep(limitsKey)
  local aging = tonumber(redis.call('HGET', limitsKey, 'ag') or '')
  if aging and aging > 0 then return aging end
  return PRIORITY_SPAN
end

-- Adds `n` (may be negative) to the count of waiting tasks of priority `p` (> 0).
local function priorityCount(ws, p, n)
  if p <= 0 or n == 0 then return end
  local key = ws .. ':pc'
  if redis.call('HINCRBY', key, p, n) <= 0 then redis.call('HDEL', key, p) end
end

-- Moves a due task of priority p > 0 into the turn queue (its seq keeps it FIFO at equal turns).
local function promote(ws, member, seq, due, p, step)
  wsAdd(turnsOf(ws), due + p * step, member, seq)
end

-- The earliest turn in the turn queue, or nil (one ZRANGE of a missing key when no task has a priority).
local function turnHead(ws)
  local head = redis.call('ZRANGE', turnsOf(ws), 0, 0, 'WITHSCORES')
  if head[2] then return tonumber(head[2]) end
  return nil
end

-- Removes a waiting task wherever it waits (the waiting set, or the turn queue when it has a priority);
-- returns 1 when it was waiting.
local function removeWaiting(ws, r, id)
  local member = memberOf(r.seq, id)
  local removed = wsRemove(ws, member, r.seq)
  if removed == 0 and r.priority > 0 then removed = wsRemove(turnsOf(ws), member, r.seq) end
  if removed == 1 then priorityCount(ws, r.priority, -1) end
  return removed
end
