--[[
  Service mode: the live instances of an application (heartbeat not expired, by the Redis clock), in id
  order; expired ones are removed on the way.
  KEYS[1] the app's instances (ZSET id -> live until, ms)  KEYS[2] the app's instance URLs (HASH id -> url)
  Returns: { now, id1, url1, id2, url2, ... }
]]
--- @include "includes/now-ms"

local now = nowMs()
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #dead > 0 then
  redis.call('ZREM', KEYS[1], unpack(dead))
  redis.call('HDEL', KEYS[2], unpack(dead))
end
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
table.sort(live)
local out = { now }
for _, id in ipairs(live) do
  local url = redis.call('HGET', KEYS[2], id)
  if url then
    out[#out + 1] = id
    out[#out + 1] = url
  end
end
return out
