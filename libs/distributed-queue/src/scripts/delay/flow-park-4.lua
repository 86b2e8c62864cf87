--[[
  Parks flow nodes that wait for dependencies (see flow-park.lua): their records are written, they enter no
  queue. A node whose id exists already is left as it is (a repeated submitFlow).
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] sequence counter  KEYS[4] the type's limits (field 'dp')
  ARGV per node 6 values: id, delay ms (counted from its release), priority ('' = the type's default),
  group ('' = none), its dependencies' refs (JSON array), payload text
  Returns: per node 1 when parked now, 0 when its id existed
]]
--- @include "includes/record"
--- @include "includes/flow-park"

local ws, jobs = KEYS[1], KEYS[2]
local n = #ARGV / 6
local seq = redis.call('INCRBY', KEYS[3], n) - n
local defaultPriority = nil
local out = {}
for i = 1, #ARGV, 6 do
  seq = seq + 1
  local id, p = ARGV[i], tonumber(ARGV[i + 2])
  if p == nil then
    defaultPriority = defaultPriority or tonumber(redis.call('HGET', KEYS[4], 'dp') or '0')
    p = defaultPriority
  end
  local rec
  if p > 0 then
    rec = encodeRecord({ attempts = 0, seq = seq, due = 0, flags = '', priority = p, payload = ARGV[i + 5] })
  else
    rec = seqTag(seq) .. ARGV[i + 5]
  end
  if redis.call('HSETNX', jobs, id, rec) == 1 then
    local deps = cjson.decode(ARGV[i + 4])
    parkedDepsApply(ws, id, deps, 'HSET')
    redis.call('HSET', parkedKey(ws), id, 'n' .. #deps .. ':' .. ARGV[i + 1] .. ':' .. ARGV[i + 3])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
