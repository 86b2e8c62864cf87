-- Moves an id to dead letters with a reason (the record stays in jobs for inspection).
-- A flow node (id '&<flow>:<ref>') is noted in ZSET <dead>:f too: the workers' sweep tells its flow (see
-- flow/flow-progress.ts sweepDead) and removes it; other tasks pay one byte compare.
local function bury(deadKey, errorsKey, id, err, now)
  redis.call('ZADD', deadKey, now, id)
  redis.call('HSET', errorsKey, id, err)
  if string.byte(id, 1) == 38 then redis.call('ZADD', deadKey .. ':f', now, id) end
end
