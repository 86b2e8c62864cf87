--[[
  Removes parked flow nodes (a cancelled flow): their records and what they wait for. A node no longer
  parked (released, or gone) is left as it is.
  KEYS[1] waiting  KEYS[2] jobs
  ARGV per node 2 values: id, its dependencies' refs (JSON array)
  Returns: per node 1 when it was parked and is gone now, else 0
]]
--- @include "includes/flow-park"

local ws = KEYS[1]
local out = {}
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HDEL', parkedKey(ws), id) == 1 then
    redis.call('HDEL', KEYS[2], id)
    parkedDepsApply(ws, id, cjson.decode(ARGV[i + 1]), 'HDEL')
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
