--[[
  Writes a flow's nodes (submitFlow, in batches), before any of its tasks exists. The first call creates the
  record in state 'creating'; a flow past 'creating' (an id used before) is left as it is.
  KEYS: see flow-record.lua
  ARGV[1] flow id  ARGV[2] nodes in all  ARGV[3] now (ms)  ARGV[4..] per node 5 values: ref, def JSON,
  payload text, its dependencies and its dependents as flow-record.lua keeps them ('' none)
  Returns: 1 (written), 0 (the flow exists and runs or ended)
]]
--- @include "includes/flow-record"

local state = redis.call('HGET', KEYS[1], 'state')
if state and state ~= 'creating' then return 0 end
if not state then
  redis.call('HSET', KEYS[1], 'state', 'creating', 'id', ARGV[1], 'total', ARGV[2], 'created', ARGV[3],
    'done', 0, 'dead', 0, 'deadFail', 0, 'cancelled', 0, 'blocked', 0)
end
for i = 4, #ARGV, 5 do
  redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
  redis.call('HSETNX', KEYS[3], ARGV[i], ARGV[i + 2])
  if ARGV[i + 3] ~= '' then redis.call('HSETNX', KEYS[2], '\r' .. ARGV[i], ARGV[i + 3]) end
  if ARGV[i + 4] ~= '' then redis.call('HSETNX', KEYS[2], '\n' .. ARGV[i], ARGV[i + 4]) end
end
return 1
