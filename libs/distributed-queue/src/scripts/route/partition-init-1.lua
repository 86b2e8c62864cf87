--[[
  Sets the partition count producers must use on one partition. When an existing partition changes count
  (a resize), its current last seq becomes its barrier: later items wait until every partition drained
  what it held before the resize. A partition created by a resize gets barrier 0 (all its items wait).
  Idempotent, so that instances starting together agree.
  KEYS[1] own
  ARGV[1] partition count  ARGV[2] the queue was grown from a smaller count (0/1)
  Returns: the partition's barrier seq (-1 = none)
]]
local own = KEYS[1]
local n = redis.call('HGET', own, 'n')
if n == ARGV[1] then return tonumber(redis.call('HGET', own, 'barrier') or -1) end
local barrier = -1
if n then
  barrier = tonumber(redis.call('HGET', own, 'seq') or 0)
elseif ARGV[2] == '1' then
  barrier = 0
end
redis.call('HSET', own, 'n', ARGV[1], 'barrier', barrier)
return barrier
