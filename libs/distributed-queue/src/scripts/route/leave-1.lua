--[[
  A machine shutting down gives a partition up at once. Its in-flight items stay for the next owner, whose
  replay does not count as a failure ('handed'): they were handed back, not lost with a crashed owner.
  KEYS[1] own
  ARGV[1] machine id  ARGV[2] epoch  ARGV[3] events channel  ARGV[4] partition number
  Returns: OUTCOME.OK (1) given up, NOT_OURS (2) not ours
]]
--- @include "includes/outcome"
--- @include "includes/is-owner"

local own = KEYS[1]
if not isOwner(own, ARGV[1], ARGV[2]) then return OUTCOME.NOT_OURS end
redis.call('HINCRBY', own, 'epoch', 1)
redis.call('HSET', own, 'owner', '', 'state', 'active', 'next', '', 'lease', 0, 'handed', 1)
redis.call('PUBLISH', ARGV[3], 'o:' .. ARGV[4])
return OUTCOME.OK
