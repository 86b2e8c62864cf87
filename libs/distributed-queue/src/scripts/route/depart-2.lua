--[[
  A machine leaving: deregisters it, releases the scheduler lock if it holds it, and asks the others to
  rebalance now.
  KEYS[1] machines  KEYS[2] lock
  ARGV[1] machine id  ARGV[2] events channel
  Returns: OUTCOME.OK
]]
--- @include "includes/outcome"
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('PUBLISH', ARGV[2], 'r')
return OUTCOME.OK
