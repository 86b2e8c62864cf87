--[[
  Adds tasks unless their id exists; wakes workers when the earliest due time moved earlier.
  A new task's record is its bare payload (its due time is its score).
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] id counter
  ARGV[1] events channel
  ARGV[2..] per task 4 values: id ('' = generate '#<base36 counter>'), mode ('d' = delay ms, 'a' = absolute ms),
  value, payload json
  Returns: { now, then per task: id and created flag (1/0) }
]]
--- @include "includes/base36"
--- @include "includes/head-score"
--- @include "includes/now-ms"
--- @include "includes/wake-if-earlier"

local now = nowMs()
local before = headScore(KEYS[1])
local out = { now }
local zargs = {}
local minDue = nil
local autoIds = 0
for i = 2, #ARGV, 4 do
  if ARGV[i] == '' then autoIds = autoIds + 1 end
end
local nextId = 0
if autoIds > 0 then nextId = redis.call('INCRBY', KEYS[3], autoIds) - autoIds end
for i = 2, #ARGV, 4 do
  local id, mode, value = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  if id == '' then
    nextId = nextId + 1
    id = '#' .. base36(nextId)
  end
  local due = value
  if mode == 'd' then due = now + value end
  out[#out + 1] = id
  if redis.call('HSETNX', KEYS[2], id, ARGV[i + 3]) == 1 then
    zargs[#zargs + 1] = due
    zargs[#zargs + 1] = id
    if minDue == nil or due < minDue then minDue = due end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if minDue ~= nil then
  redis.call('ZADD', KEYS[1], unpack(zargs))
  wakeIfEarlier(ARGV[1], before, minDue, now)
end
return out
