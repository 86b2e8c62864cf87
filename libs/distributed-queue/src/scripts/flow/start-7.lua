--[[
  Marks a flow whose nodes are all parked or submitted as running (submitFlow's last step).
  KEYS: see flow-record.lua
  ARGV[1] now (ms)  ARGV[2] retention of an ended flow (ms)
  Returns: { 1 when it was 'creating', the state it ended in now or '' }
]]
--- @include "includes/flow-record"

local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'creating' then return { 0, '' } end
redis.call('HSET', KEYS[1], 'state', 'running')
return { 1, flowEnd(tonumber(ARGV[1]), tonumber(ARGV[2])) }
