--[[
  One step of a cascade (see settle-7.lua): the nodes named became blocked (delta 1) or free again (-1);
  their dependents' blocking counts move by delta, at most `budget` dependents per call.
  KEYS: see flow-record.lua
  ARGV[1] delta (2: 1, walking every blocked node)  ARGV[2] now  ARGV[3] retention (ms)  ARGV[4] budget
  ARGV[5..] pairs: ref, the byte of its dependents' list (see flow-record.lua) to go on from (1: the first)
  Returns: { the flow's end state now or '', { refs to cascade next (from their first dependent) },
             { resume pairs: ref, byte, for those the budget did not cover } }
]]
--- @include "includes/flow-record"

local delta, walk = tonumber(ARGV[1]), ARGV[1] == '2'
if walk then delta = 1 end
local budget = tonumber(ARGV[4])
local next, rest = {}, {}
for i = 5, #ARGV, 2 do
  if budget > 0 then
    budget = flowCascadeFrom(ARGV[i], tonumber(ARGV[i + 1]), delta, walk, budget, next, rest)
  else
    rest[#rest + 1], rest[#rest + 2] = ARGV[i], ARGV[i + 1]
  end
end
return { flowEnd(tonumber(ARGV[2]), tonumber(ARGV[3])), next, rest }
