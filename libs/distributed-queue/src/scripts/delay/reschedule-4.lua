--[[
  Moves a waiting (delayed or ready) task to a new due time; it keeps its submission order (a task of a
  priority waiting its turn goes back to the waiting set: it takes a new turn when due again).
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] event stream  KEYS[4] its recorded flag (while it exists, a history
  writer runs: the reschedule is logged with its due time and delay, so the task's row does not keep its
  submit's)
  ARGV[1] id  ARGV[2] mode ('d' delay ms, 'a' absolute ms)  ARGV[3] value  ARGV[4] events channel
  ARGV[5] event stream length (0: none)
  Returns: the new due time, or -1 when the task is not waiting
]]
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/groups"
--- @include "includes/event-log"

local waiting, jobs, id = KEYS[1], KEYS[2], ARGV[1]
local rec = redis.call('HGET', jobs, id)
local r = parseRecord(rec)
if r == nil then return -1 end
local member = memberOf(r.seq, id)
local where, g = whereWaiting(waiting, r, id)
if where == nil then return -1 end
-- waiting its turn (of its priority, in its group): back to the waiting set below (each keeps its own count)
if where == WAITS_TURN then wsRemove(turnsOf(waiting), member, r.seq) end
if where == WAITS_GROUP then groupRemoveDue(waiting, g, member) end
local now = nowMs()
local due = tonumber(ARGV[3])
if ARGV[2] == 'd' then due = now + due end
local before = headScore(waiting)
if string.byte(rec, 1) == 126 then
  -- a bare record has no due time of its own: its score is enough
  r.due = due
  redis.call('HSET', jobs, id, encodeRecord(r))
end
wsAdd(waiting, due, member, r.seq)
wakeIfEarlier(ARGV[4], before, due, now)
local logLen = tonumber(ARGV[5])
if logLen > 0 and redis.call('EXISTS', KEYS[4]) == 1 then
  logEvent(KEYS[3], logLen, 'rescheduled', { 'ids', cjson.encode({ id }), 'due', cjson.encode({ due }), 'd', cjson.encode({ due - now }) })
end
return due
