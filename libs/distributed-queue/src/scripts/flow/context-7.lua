--[[
  What a node's handler reads of its dependencies: each one's state and result (or error).
  KEYS: see flow-record.lua
  ARGV[1] ref  ARGV[2] offset  ARGV[3] count (a page of its dependencies: bounds the call)
  Returns: { its dependencies in all, then flat triples: dependency ref, 'c' (then its result JSON or '') or
  'x' (then its error JSON) or '' (not settled), the JSON }
]]
--- @include "includes/flow-record"

local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return { 0 } end
local deps = cjson.decode(raw).d
local out = { #deps }
for i = tonumber(ARGV[2]) + 1, math.min(#deps, tonumber(ARGV[2]) + tonumber(ARGV[3])) do
  local d = deps[i]
  local s = redis.call('HGET', KEYS[4], d) or ''
  local json = ''
  if s == 'c' then json = redis.call('HGET', KEYS[6], d) or '' elseif s == 'x' then json = redis.call('HGET', KEYS[7], d) or '' end
  out[#out + 1], out[#out + 2], out[#out + 3] = d, s, json
end
return out
