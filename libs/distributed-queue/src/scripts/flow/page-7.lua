--[[
  One page of a flow's nodes (getFlow), and on the first page the flow's meta.
  KEYS: see flow-record.lua
  ARGV[1] HSCAN cursor of defs  ARGV[2] page size
  Returns: { next cursor, meta as flat name, value pairs (first page only, else {}), flat per node: ref, def
             JSON, its dependencies (lines, see flow-record.lua), state ('c', 'x', 'k' or ''), blocking count,
             result or error JSON ('' none) }
  (nothing when the flow does not exist)
]]
--- @include "includes/flow-record"

if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local meta = {}
if ARGV[1] == '0' then meta = redis.call('HGETALL', KEYS[1]) end
local page = redis.call('HSCAN', KEYS[2], ARGV[1], 'COUNT', tonumber(ARGV[2]))
local out = { page[1], meta }
local fields = page[2]
for i = 1, #fields, 2 do
  local ref = fields[i]
  if isNodeField(ref) then
    local s = redis.call('HGET', KEYS[4], ref) or ''
    local json = ''
    if s == 'c' then json = redis.call('HGET', KEYS[6], ref) or '' elseif s == 'x' then json = redis.call('HGET', KEYS[7], ref) or '' end
    local n = #out
    out[n + 1], out[n + 2], out[n + 3] = ref, fields[i + 1], redis.call('HGET', KEYS[2], '\r' .. ref) or ''
    out[n + 4], out[n + 5], out[n + 6] = s, blockingOf(ref), json
  end
end
return out
