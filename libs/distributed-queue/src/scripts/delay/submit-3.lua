--[[
  Adds tasks unless their id exists; wakes workers when the earliest due time moved earlier. Each new task
  takes the next number of the type's sequence, which orders tasks due at the same time (FIFO). Ids come
  from the caller (generated ones too), so a repeated call creates nothing twice.
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] sequence counter
  ARGV[1] events channel
  ARGV[2..] per task 4 values: id, mode ('d' = delay ms, 'a' = absolute ms), value, payload json
  Returns: { now, then per task: created flag (1/0) }
]]
--- @include "includes/now-ms"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/seq-tag"

local waiting, jobs = KEYS[1], KEYS[2]
local now = nowMs()
local before = headScore(waiting)
local out = { now }
local zargs = {}
local minDue = nil
local seq = redis.call('INCRBY', KEYS[3], (#ARGV - 1) / 4) - (#ARGV - 1) / 4
for i = 2, #ARGV, 4 do
  local id, value = ARGV[i], tonumber(ARGV[i + 2])
  seq = seq + 1
  local due = value
  if ARGV[i + 1] == 'd' then due = now + value end
  local tag = seqTag(seq)
  if redis.call('HSETNX', jobs, id, tag .. ARGV[i + 3]) == 1 then
    zargs[#zargs + 1] = due
    zargs[#zargs + 1] = tag .. id
    if minDue == nil or due < minDue then minDue = due end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if minDue ~= nil then
  redis.call('ZADD', waiting, unpack(zargs))
  wakeIfEarlier(ARGV[1], before, minDue, now)
end
return out
