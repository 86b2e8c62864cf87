--[[
  A consumer's presence: records it as live for `ttl` ms more (its lease-renewal timer calls this every
  tick) and drops the entries of consumers that expired (stopped without leaving, or died).
  KEYS[1] consumers (ZSET consumer id -> live until, ms)
  ARGV[1] consumer id  ARGV[2] ttl ms
  Returns: OUTCOME.OK
]]
--- @include "includes/outcome"
--- @include "includes/now-ms"

local now = nowMs()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return OUTCOME.OK
