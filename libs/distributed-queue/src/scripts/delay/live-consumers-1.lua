--[[
  How many consumers of a type are live now (their presence has not expired), by Redis's clock.
  KEYS[1] consumers (ZSET consumer id -> live until, ms)
  Returns: the number of live consumers
]]
--- @include "includes/now-ms"

return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', nowMs()), '+inf')
