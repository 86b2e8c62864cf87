--[[
  One group of a type (see groups.lua): its waiting tasks (delayed and due), due ones, running ones and
  settings.
  KEYS[1] waiting
  ARGV[1] group
  Returns: { waiting, due, running, paused (0/1), its own concurrency ('' none), its weight ('' default), its
             own rate limit ('' none) }
]]
--- @include "includes/groups"

local ws, g = KEYS[1], ARGV[1]
local set = redis.call('HMGET', ws .. ':gset', 'p:' .. g, 'c:' .. g, 'w:' .. g, 'r:' .. g)
return { tonumber(redis.call('ZSCORE', ws .. ':gb', g) or '0'), redis.call('ZCARD', groupKey(ws, g)),
  tonumber(redis.call('HGET', ws .. ':grun', g) or '0'), set[1] and 1 or 0, set[2] or '', set[3] or '', set[4] or '' }
