--[[
  Writes a flow's nodes (submitFlow, in batches), before any of its tasks exists: the record is 'creating'
  until its last batch, which makes it 'running'. A flow past 'creating' gets nothing new (a repeated
  submitFlow), and the reply says which of the batch's nodes to leave alone: settled already (a node that
  ran is settled before its task is acknowledged), or not the flow's; a repeat parks and submits the others
  again, which creates what a failed call left out and nothing else (their ids exist).
  KEYS: see flow-record.lua
  ARGV[1] flow id  ARGV[2] nodes in all  ARGV[3] now (ms)  ARGV[4] '1' on the last batch  ARGV[5] retention
  ARGV[6..] per node 4 values: ref, def JSON, its dependencies and its dependents as flow-record.lua keeps
  them ('' none). (A node's payload is its task's: the record keeps none.)
  Returns: { 1 created now (0: it existed), the flow's end state now or '', per node 1 to leave alone else 0 }
]]
--- @include "includes/flow-record"

local state = redis.call('HGET', KEYS[1], 'state')
local created = 0
if not state then
  created = 1
  state = 'creating'
  redis.call('HSET', KEYS[1], 'state', state, 'id', ARGV[1], 'total', ARGV[2], 'created', ARGV[3],
    'done', 0, 'dead', 0, 'deadFail', 0, 'cancelled', 0, 'blocked', 0)
end
local out = { created, '' }

-- HSET of field, value pairs, at most 500 pairs a command (unpack's bound).
local function hsetAll(key, flat)
  for from = 1, #flat, 1000 do
    redis.call('HSET', key, unpack(flat, from, math.min(from + 999, #flat)))
  end
end

if created == 1 then
  -- NOTE: a new flow: none of its nodes exists or is settled (what a flow of the same id left, expiring, goes
  -- first), so the batch is written whole, one command per hash, none checked.
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
  local defs = {}
  for i = 6, #ARGV, 4 do
    defs[#defs + 1], defs[#defs + 2] = ARGV[i], ARGV[i + 1]
    if ARGV[i + 2] ~= '' then defs[#defs + 1], defs[#defs + 2] = '\r' .. ARGV[i], ARGV[i + 2] end
    if ARGV[i + 3] ~= '' then defs[#defs + 1], defs[#defs + 2] = '\n' .. ARGV[i], ARGV[i + 3] end
    out[#out + 1] = 0
  end
  hsetAll(KEYS[2], defs)
else
  for i = 6, #ARGV, 4 do
    if state == 'creating' then
      redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
      if ARGV[i + 2] ~= '' then redis.call('HSETNX', KEYS[2], '\r' .. ARGV[i], ARGV[i + 2]) end
      if ARGV[i + 3] ~= '' then redis.call('HSETNX', KEYS[2], '\n' .. ARGV[i], ARGV[i + 3]) end
      out[#out + 1] = redis.call('HEXISTS', KEYS[4], ARGV[i])
    elseif redis.call('HEXISTS', KEYS[2], ARGV[i]) == 0 then
      out[#out + 1] = 1 -- a node the flow does not have: a repeat writes nothing new
    else
      out[#out + 1] = redis.call('HEXISTS', KEYS[4], ARGV[i])
    end
  end
end
if ARGV[4] == '1' and state == 'creating' then
  redis.call('HSET', KEYS[1], 'state', 'running')
  out[2] = flowEnd(tonumber(ARGV[3]), tonumber(ARGV[5]))
end
return out
