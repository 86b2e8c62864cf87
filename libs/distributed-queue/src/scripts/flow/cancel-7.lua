--[[
  One page of cancelFlow: marks every node of the page not settled yet as cancelled and returns them, so
  that the caller removes their tasks (parked ones) or cancels them (waiting or running ones). The flow
  ends 'cancelled' once every node is settled, unless no node was left to cancel (it stays 'completed').
  KEYS: see flow-record.lua
  ARGV[1] HSCAN cursor of defs  ARGV[2] page size  ARGV[3] now  ARGV[4] retention (ms)
  Returns: { next cursor ('0': the last page), the flow's end state now or '', flat triples: ref, def JSON,
  its dependencies (lines, see flow-record.lua) }
  (nothing when the flow does not exist)
]]
--- @include "includes/flow-record"

if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local page = redis.call('HSCAN', KEYS[2], ARGV[1], 'COUNT', tonumber(ARGV[2]))
local out = { page[1], '' }
local fields = page[2]
local cancelled, unblocked = 0, 0
for i = 1, #fields, 2 do
  local ref = fields[i]
  if isNodeField(ref) and redis.call('HSETNX', KEYS[4], ref, 'k') == 1 then
    cancelled = cancelled + 1
    if blockingOf(ref) > 0 then unblocked = unblocked + 1 end
    out[#out + 1], out[#out + 2], out[#out + 3] = ref, fields[i + 1], redis.call('HGET', KEYS[2], '\r' .. ref) or ''
  end
end
-- NOTE: a flow with nothing left to cancel (it completed) keeps its state.
if cancelled > 0 then
  redis.call('HINCRBY', KEYS[1], 'cancelled', cancelled)
  redis.call('HSET', KEYS[1], 'cancel', '1')
end
if unblocked > 0 then redis.call('HINCRBY', KEYS[1], 'blocked', -unblocked) end
out[2] = flowEnd(tonumber(ARGV[3]), tonumber(ARGV[4]))
return out
