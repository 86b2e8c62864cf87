--[[
  Opens a partition's resize gate once every old partition drained past its barrier.
  KEYS[1] own
  Returns: OUTCOME.OK
]]
--- @include "includes/outcome"
redis.call('HSET', KEYS[1], 'barrier', -1)
return OUTCOME.OK
