--[[
  Changes a waiting task's priority (see priority.lua) in O(log n): its record takes the new priority; a task
  waiting its turn takes the turn of the new one at once (due + p * step; in its group's queue, see
  groups.lua), or, out of the turn queue at priority 0, goes back to the waiting set at its due time. A task
  not yet due takes its turn when due, as any other.
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] the type's limits (its aging step)
  ARGV[1] id  ARGV[2] the new priority (0 to 1000)  ARGV[3] events channel
  Returns: the task's priority before, or -1 when the task is not waiting
]]
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/groups"

local ws, jobs, id = KEYS[1], KEYS[2], ARGV[1]
local p = tonumber(ARGV[2])
local rec = redis.call('HGET', jobs, id)
local r = parseRecord(rec)
if r == nil then return -1 end
local member = memberOf(r.seq, id)
local where, at = whereWaiting(ws, r, id)
if where == nil then return -1 end
local before = r.priority
if before == p then return before end
if string.byte(rec, 1) ~= 126 then
  -- a bare record: its due time is its score (in a group's queue, its turn: priority 0 has no step)
  r.due = tonumber(where == WAITS_SET and at or redis.call('ZSCORE', groupKey(ws, at or ''), member))
end
r.priority = p
if where == WAITS_SET and string.byte(rec, 1) ~= 126 then
  -- still waiting by its due time: the short record keeps its form, with the new priority's mark
  redis.call('HSET', jobs, id, shortRecord(seqTag(r.seq), p, r.payload))
else
  redis.call('HSET', jobs, id, encodeRecord(r))
end
priorityCount(ws, before, -1)
priorityCount(ws, p, 1)
if where == WAITS_GROUP then
  redis.call('ZADD', groupKey(ws, at), r.due + (p > 0 and p * agingStep(KEYS[3]) or 0), member)
elseif where == WAITS_TURN then
  wsRemove(turnsOf(ws), member, r.seq)
  if p > 0 then
    promote(ws, member, r.seq, r.due, p, agingStep(KEYS[3]))
  else
    local head = headScore(ws)
    wsAdd(ws, r.due, member, r.seq)
    wakeIfEarlier(ARGV[3], head, r.due, nowMs())
  end
end
return before
