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
    local deps = cjson.decode(ARGV[i + 1])
    local fields = {}
    for d = 1, #deps do
      fields[#fields + 1] = id .. '\n' .. deps[d]
      if #fields >= 1000 or d == #deps then
        redis.call('HDEL', parkedDepsKey(ws), unpack(fields))
        fields = {}
      end
    end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
