--[[
  One bounded step of counting a type's ready tasks (see counts-4.lua): the tasks due at `now` or earlier in
  the next COUNT_STEP chunks of the waiting set's index.
  KEYS[1] waiting
  ARGV[1] now (the counts' Redis time)  ARGV[2] the index rank to go on from
  Returns: { ready in these chunks, rank to go on from (-1: all counted) }
]]
--- @include "includes/waiting-set"

local COUNT_STEP = 256
local ready, nextRank = wsCountReady(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), COUNT_STEP)
return { ready, nextRank }
