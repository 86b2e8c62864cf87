--[[
  The owner acknowledges finished items and buries failed ones. Fenced by owner and epoch.
  KEYS[1] own  KEYS[2] inflight  KEYS[3] dead
  ARGV[1] machine id  ARGV[2] epoch  ARGV[3] dead letters kept  ARGV[4] number of acked seqs A
  ARGV[5 .. 4+A] acked seqs, then pairs of seq, error json for buried items
  Returns: OUTCOME.OK (1) done, NOT_OURS (2) fenced (not the owner any more: nothing changed)
]]
--- @include "includes/outcome"
--- @include "includes/fmt"
--- @include "includes/is-owner"
--- @include "includes/now-ms"

local own, inflight, dead = KEYS[1], KEYS[2], KEYS[3]
if not isOwner(own, ARGV[1], ARGV[2]) then return OUTCOME.NOT_OURS end
local acked = tonumber(ARGV[4])
local now = nowMs()
if acked > 0 then
  local seqs = {}
  for i = 5, 4 + acked do seqs[#seqs + 1] = ARGV[i] end
  redis.call('HDEL', inflight, unpack(seqs))
end
for i = 5 + acked, #ARGV, 2 do
  local item = redis.call('HGET', inflight, ARGV[i])
  if item then
    redis.call('HDEL', inflight, ARGV[i])
    redis.call('RPUSH', dead, '{"item":' .. cjson.encode(item) .. ',"diedAt":' .. fmt(now) .. ',"error":' .. ARGV[i + 1] .. '}')
  end
end
if #ARGV > 4 + acked then redis.call('LTRIM', dead, -tonumber(ARGV[3]), -1) end
if redis.call('HLEN', inflight) == 0 then redis.call('HSET', own, 'replays', 0) end
return OUTCOME.OK
