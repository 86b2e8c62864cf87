--[[
  The scheduler lock in one step: taken when free, renewed when the caller holds it. (A check and a renewal
  in two commands could renew a lock that expired and went to another machine in between.)
  KEYS[1] lock
  ARGV[1] machine id  ARGV[2] lease ms
  Returns: OUTCOME.OK (1) held by the caller now, NOT_OURS (2) held by another machine
]]
--- @include "includes/outcome"
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return OUTCOME.NOT_OURS end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return OUTCOME.OK
