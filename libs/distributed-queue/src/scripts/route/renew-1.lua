--[[
  Heartbeat of one partition: its owner extends the lease (and on a claim, when a process starts consuming,
  takes a new epoch so that a previous incarnation with the same machine id is fenced off).
  A claim is idempotent per claim id: a repeated claim (a re-sent command) gets the epoch of the first.
  KEYS[1] own
  ARGV[1] machine id  ARGV[2] lease ms  ARGV[3] claim id ('' = no claim)
  Returns: { OUTCOME.OK, epoch, state, paused (0/1) } when the caller owns it, else { OUTCOME.NOT_OURS, owner or '', epoch }
]]
--- @include "includes/outcome"
--- @include "includes/fmt"
--- @include "includes/now-ms"

local own = KEYS[1]
local r = redis.call('HMGET', own, 'owner', 'epoch', 'state', 'claim', 'paused')
if r[1] ~= ARGV[1] then return { OUTCOME.NOT_OURS, r[1] or '', tonumber(r[2] or 0) } end
local epoch = tonumber(r[2] or 0)
if ARGV[3] ~= '' and r[4] ~= ARGV[3] then
  epoch = redis.call('HINCRBY', own, 'epoch', 1)
  redis.call('HSET', own, 'claim', ARGV[3])
end
redis.call('HSET', own, 'lease', fmt(nowMs() + tonumber(ARGV[2])))
return { OUTCOME.OK, epoch, r[3] or 'active', r[5] == '1' and 1 or 0 }
