-- Score of the earliest waiting task, or nil.
local function headScore(waitingKey)
  local head = redis.call('ZRANGE', waitingKey, 0, 0, 'WITHSCORES')
  if head[2] then return tonumber(head[2]) end
  return nil
end
