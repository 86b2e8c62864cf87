--[[
  Cooperative hand-over: the old owner, its in-flight batch finished and acknowledged, passes the partition
  to the next owner with a new epoch.
  KEYS[1] own
  ARGV[1] machine id  ARGV[2] epoch  ARGV[3] lease ms  ARGV[4] events channel  ARGV[5] partition number
  Returns: 1 handed over, 0 not ours or not revoking
]]
--- @include "includes/fmt"
--- @include "includes/is-owner"
--- @include "includes/now-ms"

local own = KEYS[1]
if not isOwner(own, ARGV[1], ARGV[2]) then return 0 end
local r = redis.call('HMGET', own, 'state', 'next')
if r[1] ~= 'revoking' or not r[2] or r[2] == '' then return 0 end
redis.call('HINCRBY', own, 'epoch', 1)
redis.call('HSET', own, 'owner', r[2], 'state', 'active', 'next', '', 'lease', fmt(nowMs() + tonumber(ARGV[3])))
redis.call('PUBLISH', ARGV[4], 'o:' .. ARGV[5])
return 1
