--[[
  Records the partition count. Growing is allowed (the count before the latest growth is kept as
  `previous`); shrinking is refused. A new queue names its partitions' hash tags so that they spread over a
  cluster (`tags` = 'spread'); a queue created before that has no `tags` and keeps its plain tags.
  KEYS[1] meta (HASH: partitions, previous, barriers, tags)
  ARGV[1] partition count wanted
  Returns: { OUTCOME.OK, count now, count before the latest growth (0: the queue was created with this count),
           tags ('spread', or '' for plain tags) } or { OUTCOME.SHRINK_REFUSED, count stored }
]]
--- @include "includes/outcome"

local stored = tonumber(redis.call('HGET', KEYS[1], 'partitions') or 0)
local wanted = tonumber(ARGV[1])
if wanted < stored then return { OUTCOME.SHRINK_REFUSED, stored } end
if stored == 0 then redis.call('HSET', KEYS[1], 'tags', 'spread') end
if wanted > stored then redis.call('HSET', KEYS[1], 'partitions', wanted, 'previous', stored) end
local meta = redis.call('HMGET', KEYS[1], 'previous', 'tags')
return { OUTCOME.OK, wanted, tonumber(meta[1] or 0), meta[2] or '' }
