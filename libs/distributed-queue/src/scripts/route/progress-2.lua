--[[
  How far a partition has drained: the smallest seq still waiting or in flight (-1 = nothing left).
  KEYS[1] list  KEYS[2] inflight
  Returns: smallest pending seq or -1
]]
--- @include "includes/seq-of"

local min = -1
local head = redis.call('LINDEX', KEYS[1], 0)
if head then min = seqOf(head) end
for _, seq in ipairs(redis.call('HKEYS', KEYS[2])) do
  local s = tonumber(seq)
  if min < 0 or s < min then min = s end
end
return min
