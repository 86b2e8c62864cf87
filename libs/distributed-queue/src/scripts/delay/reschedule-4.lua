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
--- @include "includes/move-due"

local waiting, jobs, id = KEYS[1], KEYS[2], ARGV[1]
local rec = redis.call('HGET', jobs, id)
local r = parseRecord(rec)
if r == nil then return -1 end
local now = nowMs()
local due = tonumber(ARGV[3])
if ARGV[2] == 'd' then due = now + due end
if not moveDue(waiting, jobs, id, rec, r, due, ARGV[4], now) then return -1 end
local logLen = tonumber(ARGV[5])
if logLen > 0 and redis.call('EXISTS', KEYS[4]) == 1 then
  logEvent(KEYS[3], logLen, 'rescheduled', { 'ids', cjson.encode({ id }), 'due', cjson.encode({ due }), 'd', cjson.encode({ due - now }) })
end
return due
