--[[
  One step of a cascade (see settle-7.lua): the nodes named became blocked (delta 1) or free again (-1);
  their dependents' blocking counts move by delta, at most `budget` dependents per call.
  KEYS: see flow-record.lua
  ARGV[1] delta (2: 1, walking every blocked node)  ARGV[2] now  ARGV[3] retention (ms)  ARGV[4] budget
  ARGV[5..] pairs: ref, the byte of its dependents' list (see flow-record.lua) to go on from (1: the first)
  The refs the cascade reaches are carried on in the same call while the budget lasts.
  Returns: { the flow's end state now or '', { } (refs to cascade next: none, they are in the resume pairs),
             { resume pairs: ref, byte, for those the budget did not cover } }
]]
--- @include "includes/flow-record"

local delta, walk = tonumber(ARGV[1]), ARGV[1] == '2'
if walk then delta = 1 end
local budget = tonumber(ARGV[4])
-- NOTE: the refs a step reaches are carried on in the same call while the budget lasts (a chain of 100,000
-- nodes took a call per node: a minute); the queue holds at most the steps given plus `budget` refs reached.
local queue = {}
for i = 5, #ARGV, 2 do queue[#queue + 1] = ARGV[i]; queue[#queue + 1] = tonumber(ARGV[i + 1]) end
local rest = {}
local q = 1
while q < #queue do
  local ref, from = queue[q], queue[q + 1]
  q = q + 2
  if budget > 0 then
    local reached = {}
    budget = flowCascadeFrom(ref, from, delta, walk, budget, reached, rest)
    for _, r in ipairs(reached) do queue[#queue + 1] = r; queue[#queue + 1] = 1 end
  else
    rest[#rest + 1], rest[#rest + 2] = ref, from
  end
end
return { flowEnd(tonumber(ARGV[2]), tonumber(ARGV[3])), {}, rest }
