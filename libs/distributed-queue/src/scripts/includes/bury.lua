-- Moves an id to dead letters with a reason (the record stays in jobs for inspection).
local function bury(deadKey, errorsKey, id, err, now)
  redis.call('ZADD', deadKey, now, id)
  redis.call('HSET', errorsKey, id, err)
end
