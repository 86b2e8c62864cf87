--[[
  Distributed cron: creates or replaces a schedule. The same definition again changes nothing while its
  next tick is pending (every instance declares its @DistributedCron schedules at start-up); a new one gets the next version and its
  first two ticks, tasks of the internal tick type, in the same step (the chain runs two ticks ahead: see
  advance-8.lua). The old version's last pending tick is returned
  so that the caller cancels it (were it left, it would find its version gone and do nothing).
  KEYS[1] definitions (HASH name -> json)  KEYS[2] versions (HASH name -> n)  KEYS[3] next ticks (HASH name ->
  "<version>:<ms of the furthest tick added>:<ms of the next tick>")  KEYS[4] tick type waiting  KEYS[5] its jobs  KEYS[6] its
  sequence  KEYS[7] last ticks  KEYS[8] catch-ups (cleared: a new version starts afresh)
  ARGV[1] tick type's events channel  ARGV[2] name  ARGV[3] definition json  ARGV[4] first tick (ms, '' when
  it has none)  ARGV[5] the tick after it (ms, '' none)
  Returns: { 0 the same definition (nothing changed) or 1 changed, version, old tick task id or '' }
]]
--- @include "includes/now-ms"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/seq-tag"
--- @include "includes/add-task"

local name = ARGV[2]
local current = redis.call('HGET', KEYS[1], name)
local version = tonumber(redis.call('HGET', KEYS[2], name) or '0')
local old = redis.call('HGET', KEYS[3], name)
local oldId = ''
if old then
  local v, t = string.match(old, '^(%d+):(%d+)')
  if v then oldId = name .. '@' .. v .. '@' .. t end
end
-- NOTE: the same definition whose pending tick is gone (e.g. dead-lettered) starts a new chain: repaired.
if current == ARGV[3] and oldId ~= '' and redis.call('HEXISTS', KEYS[5], oldId) == 1 then return { 0, version, '' } end
version = redis.call('HINCRBY', KEYS[2], name, 1)
redis.call('HSET', KEYS[1], name, ARGV[3])
redis.call('HDEL', KEYS[8], name)
redis.call('HDEL', KEYS[3], name)
local now = nowMs()
for i = 4, 5 do
  if ARGV[i] ~= '' then
    local tick = tonumber(ARGV[i])
    addTask(KEYS[4], KEYS[5], KEYS[6], ARGV[1], name .. '@' .. version .. '@' .. ARGV[i], tick, cjson.encode({ name = name, version = version, tick = tick }), now)
    redis.call('HSET', KEYS[3], name, version .. ':' .. ARGV[i] .. ':' .. ARGV[4])
  end
end
return { 1, version, oldId }
