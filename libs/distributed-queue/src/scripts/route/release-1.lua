--[[
  Cooperative hand-over: the old owner, revoking, its running tasks ended and acknowledged, passes the
  partition to the next owner with a new epoch. What it did not start stays in flight: the next owner
  replays it first, in seq order, and that replay does not count as a failure ('handed').
  KEYS[1] own
  ARGV[1] machine id  ARGV[2] epoch  ARGV[3] lease ms  ARGV[4] events channel  ARGV[5] partition number
  Returns: OUTCOME.OK (handed over), NOT_OURS (fenced), NOT_REVOKING (ours, but the scheduler called the hand-over off)
]]
--- @include "includes/outcome"
--- @include "includes/fmt"
--- @include "includes/is-owner"
--- @include "includes/now-ms"

local own = KEYS[1]
if not isOwner(own, ARGV[1], ARGV[2]) then return OUTCOME.NOT_OURS end
local r = redis.call('HMGET', own, 'state', 'next')
if r[1] ~= 'revoking' or not r[2] or r[2] == '' then return OUTCOME.NOT_REVOKING end
redis.call('HINCRBY', own, 'epoch', 1)
redis.call('HSET', own, 'owner', r[2], 'state', 'active', 'next', '', 'handed', 1, 'lease', fmt(nowMs() + tonumber(ARGV[3])))
redis.call('PUBLISH', ARGV[4], 'o:' .. ARGV[5])
return OUTCOME.OK
