--[[
  Distributed cron: a tick of a schedule is being handled. Unless the schedule was replaced or removed
  since (its version changed: stale, nothing runs), the next tick is added in the same step, once: a
  second attempt at the same tick finds it added (again) and runs the tick without adding another.
  KEYS[1] definitions  KEYS[2] versions  KEYS[3] next ticks  KEYS[4] tick type waiting  KEYS[5] its jobs
  KEYS[6] its sequence  KEYS[7] last ticks (HASH name -> ms of the last tick handled)
  ARGV[1] tick type's events channel  ARGV[2] name  ARGV[3] version  ARGV[4] this tick (ms)  ARGV[5] next
  tick (ms, '' when the schedule has no more)
  Returns: 1 advanced, 2 again (advanced by an earlier attempt), 0 stale
]]
--- @include "includes/now-ms"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/seq-tag"
--- @include "includes/add-task"

local name, version = ARGV[2], ARGV[3]
if redis.call('HGET', KEYS[2], name) ~= version or redis.call('HEXISTS', KEYS[1], name) == 0 then return 0 end
redis.call('HSET', KEYS[7], name, ARGV[4])
if redis.call('HGET', KEYS[3], name) ~= version .. ':' .. ARGV[4] then return 2 end
if ARGV[5] == '' then
  redis.call('HDEL', KEYS[3], name)
else
  local tick = tonumber(ARGV[5])
  local id = name .. '@' .. version .. '@' .. ARGV[5]
  addTask(KEYS[4], KEYS[5], KEYS[6], ARGV[1], id, tick, cjson.encode({ name = name, version = tonumber(version), tick = tick }), nowMs())
  redis.call('HSET', KEYS[3], name, version .. ':' .. ARGV[5])
end
return 1
