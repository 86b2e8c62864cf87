--[[
  Records the partition count. Growing is allowed; shrinking is refused.
  KEYS[1] meta (HASH: partitions, barriers)
  ARGV[1] partition count wanted
  Returns: { stored count before (0 = new queue), count now } or an error 'SHRINK <stored>'
]]
local stored = tonumber(redis.call('HGET', KEYS[1], 'partitions') or 0)
local wanted = tonumber(ARGV[1])
if wanted < stored then return redis.error_reply('SHRINK ' .. stored) end
if wanted > stored then redis.call('HSET', KEYS[1], 'partitions', wanted) end
return { stored, math.max(stored, wanted) }
