--[[
  Removes up to `batch` waiting (delayed and ready) tasks of a type, a chunk at a time, with their records
  and last errors. Running tasks are not waiting and are never touched. The caller repeats the call until
  it removes fewer than `batch`, so no single call holds Redis for long.
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] errors
  ARGV[1] batch (at most ~5000: unpack's limit)
  Returns: the number of tasks removed
]]
--- @include "includes/waiting-set"

local members = wsPop(KEYS[1], tonumber(ARGV[1]))
if #members == 0 then return 0 end
local ids = {}
for i, member in ipairs(members) do ids[i] = idOfMember(member) end
redis.call('HDEL', KEYS[2], unpack(ids))
redis.call('HDEL', KEYS[3], unpack(ids))
return #members
