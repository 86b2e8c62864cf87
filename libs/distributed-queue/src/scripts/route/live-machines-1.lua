--[[
  How many machines of the route queue are live: their last heartbeat is younger than the offline
  threshold (Redis clock).
  KEYS[1] machines (ZSET machine id -> last heartbeat ms)
  ARGV[1] offline ms
  Returns: the number of live machines
]]
--- @include "includes/now-ms"

return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', nowMs() - tonumber(ARGV[1])), '+inf')
