--[[
  A handler met a rate limit of its own (RateLimitedError): no worker of the fleet starts a task of the
  type until now + ARGV[1] ms (Redis clock), or later when an earlier pause ends later.
  KEYS[1] limits (see includes/admission.lua)
  ARGV[1] ms
  Returns: the ms until the pause ends.
]]
--- @include "includes/now-ms"
local now = nowMs()
local untilMs = now + tonumber(ARGV[1])
local current = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if current > untilMs then untilMs = current end
redis.call('HSET', KEYS[1], 'until', string.format('%.0f', untilMs))
return untilMs - now
