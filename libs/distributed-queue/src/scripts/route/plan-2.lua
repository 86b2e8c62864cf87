--[[
  The scheduler writes its plan (partition -> machine), replacing the previous one, only while it holds the
  scheduler lock: a scheduler whose lock expired cannot overwrite a newer plan.
  KEYS[1] assignment  KEYS[2] lock
  ARGV[1] machine id  ARGV[2..] pairs of partition, machine
  Returns: OUTCOME.OK (1) written, NOT_OURS (2) not the lock holder
]]
--- @include "includes/outcome"
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return OUTCOME.NOT_OURS end
redis.call('DEL', KEYS[1])
-- NOTE: in chunks, as unpack() has a limit of a few thousand values.
for i = 2, #ARGV, 1000 do
  redis.call('HSET', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return OUTCOME.OK
