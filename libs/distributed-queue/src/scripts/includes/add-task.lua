-- Adds one task to a delay-queue type (as submit does: sequence tag, record, waiting-set member) unless its
-- id exists; wakes the type's workers when it is due before everything else. Returns 1 when added.
-- Needs includes head-score and wake-if-earlier.
--- @include "includes/waiting-set"
local function addTask(waiting, jobs, seqKey, channel, id, due, payload, now)
  local seq = redis.call('INCR', seqKey)
  local tag = seqTag(seq)
  if redis.call('HSETNX', jobs, id, tag .. payload) == 0 then return 0 end
  local before = headScore(waiting)
  wsAdd(waiting, due, tag .. id, seq)
  wakeIfEarlier(channel, before, due, now)
  return 1
end
