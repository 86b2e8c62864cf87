--[[
  Adds tasks unless their id exists; wakes workers when the earliest due time moved earlier.
  KEYS[1] waiting  KEYS[2] jobs
  ARGV[1] events channel
  ARGV[2..] per task 4 values: id, mode ('d' = delay ms, 'a' = absolute ms), value, payload json
  Returns: { now, created flag (1/0) per task }
]]
--- @include "includes/common"

local now = nowMs()
local before = headScore(KEYS[1])
local out = { now }
local zargs = {}
local minDue = nil
for i = 2, #ARGV, 4 do
  local id, mode, value = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local due = value
  if mode == 'd' then due = now + value end
  local rec = string.format('0:0:%.0f::', due) .. ARGV[i + 3]
  if redis.call('HSETNX', KEYS[2], id, rec) == 1 then
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
