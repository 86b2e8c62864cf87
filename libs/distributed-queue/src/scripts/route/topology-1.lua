--[[
  Records the partition count. Growing is allowed (the count before the latest growth is kept as
  `previous`); shrinking is refused.
  KEYS[1] meta (HASH: partitions, previous, barriers)
  ARGV[1] partition count wanted
  Returns: { OUTCOME.OK, count now, count before the latest growth (0: the queue was created with this count) }
           or { OUTCOME.SHRINK_REFUSED, count stored }
]]
--- @include "includes/outcome"

local stored = tonumber(redis.call('HGET', KEYS[1], 'partitions') or 0)
local wanted = tonumber(ARGV[1])
if wanted < stored then return { OUTCOME.SHRINK_REFUSED, stored } end
if wanted > stored then redis.call('HSET', KEYS[1], 'partitions', wanted, 'previous', stored) end
return { OUTCOME.OK, wanted, tonumber(redis.call('HGET', KEYS[1], 'previous') or 0) }
