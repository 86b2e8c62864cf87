--[[
  Sets the partition count producers must use on one partition. On a resize of a partition that holds
  items, the current last seq becomes its barrier: later items wait until every old partition drained.
  KEYS[1] own
  ARGV[1] partition count  ARGV[2] set a barrier (0/1)
  Returns: the barrier seq (-1 = none)
]]
local own = KEYS[1]
if redis.call('HGET', own, 'n') == ARGV[1] then return tonumber(redis.call('HGET', own, 'barrier') or -1) end
local barrier = -1
if ARGV[2] == '1' then barrier = tonumber(redis.call('HGET', own, 'seq') or 0) end
redis.call('HSET', own, 'n', ARGV[1], 'barrier', barrier)
return barrier
