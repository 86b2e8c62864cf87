--[[
  One page of a type's groups by backlog, largest first (see groups.lua): O(log n + limit).
  KEYS[1] waiting
  ARGV[1] offset  ARGV[2] limit
  Returns: { groups with a backlog, then per group: name, waiting, running, paused (0/1), its own concurrency
             ('' none), its weight ('' default), its rate limit ('' none: "<max>:<perMs>:<burst>") }
]]
--- @include "includes/groups"

local ws = KEYS[1]
local out = { redis.call('ZCARD', ws .. ':gb') }
local page = redis.call('ZREVRANGE', ws .. ':gb', tonumber(ARGV[1]), tonumber(ARGV[1]) + tonumber(ARGV[2]) - 1, 'WITHSCORES')
for i = 1, #page, 2 do
  local g = page[i]
  local set = redis.call('HMGET', ws .. ':gset', 'p:' .. g, 'c:' .. g, 'w:' .. g, 'r:' .. g)
  out[#out + 1] = g
  out[#out + 1] = tonumber(page[i + 1])
  out[#out + 1] = tonumber(redis.call('HGET', ws .. ':grun', g) or '0')
  out[#out + 1] = set[1] and 1 or 0
  out[#out + 1] = set[2] or ''
  out[#out + 1] = set[3] or ''
  out[#out + 1] = set[4] or ''
end
return out
