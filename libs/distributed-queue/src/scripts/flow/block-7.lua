--[[
  One step of a cascade (see settle-7.lua): the nodes `refs` became blocked (delta 1) or free again (-1);
  their dependents' blocking counts move by delta. Returns the refs whose state flipped in turn.
  KEYS: see flow-record.lua
  ARGV[1] delta (2: 1, walking every blocked node)  ARGV[2] now  ARGV[3] retention (ms)  ARGV[4..] refs (a caller's batch)
  Returns: { the flow's end state now or '', { refs to cascade next } }
]]
--- @include "includes/flow-record"

local delta, walk = tonumber(ARGV[1]), ARGV[1] == '2'
if walk then delta = 1 end
local next = {}
for i = 4, #ARGV do
  local raw = redis.call('HGET', KEYS[2], ARGV[i])
  if raw then
    for _, r in ipairs(flowCascade(ARGV[i], dependentRefs(cjson.decode(raw)), delta, walk)) do next[#next + 1] = r end
  end
end
return { flowEnd(tonumber(ARGV[2]), tonumber(ARGV[3])), next }
