--[[
  What a node's handler reads of its dependencies: each one's state and result (or error).
  KEYS: see flow-record.lua
  ARGV[1] ref  ARGV[2] the byte of its dependencies' list to read from (1: the first)  ARGV[3] count (a page:
  bounds the call)
  Returns: { the byte to go on from (0: done), then flat triples: dependency ref, 'c' (then its result JSON or '') or
  'x' (then its error JSON) or '' (not settled), the JSON }
]]
--- @include "includes/flow-record"

local deps, resume = linesFrom(redis.call('HGET', KEYS[2], '\r' .. ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
local out = { resume or 0 }
for _, d in ipairs(deps) do
  local s = redis.call('HGET', KEYS[4], d) or ''
  local json = ''
  if s == 'c' then json = redis.call('HGET', KEYS[6], d) or '' elseif s == 'x' then json = redis.call('HGET', KEYS[7], d) or '' end
  out[#out + 1], out[#out + 2], out[#out + 3] = d, s, json
end
return out
