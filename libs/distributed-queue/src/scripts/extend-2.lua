--[[
  Renews the leases of reserved tasks that are still ours.
  KEYS[1] active  KEYS[2] running
  ARGV[1] lease ms  ARGV[2..] pairs of id, token
  Returns: ids whose reservation is lost (expired and recovered, or taken by another worker)
]]
--- @include "includes/common"

local active, running = KEYS[1], KEYS[2]
local ids, tokens = {}, {}
for i = 2, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  tokens[#tokens + 1] = tonumber(ARGV[i + 1])
end
if #ids == 0 then return {} end
local deadline = nowMs() + tonumber(ARGV[1])
local scores = redis.call('ZMSCORE', active, unpack(ids))
local leases = redis.call('HMGET', running, unpack(ids))
local lost, zadd = {}, {}
for i = 1, #ids do
  if scores[i] and parseLease(leases[i]) == tokens[i] then
    zadd[#zadd + 1] = deadline
    zadd[#zadd + 1] = ids[i]
  else
    lost[#lost + 1] = ids[i]
  end
end
if #zadd > 0 then redis.call('ZADD', active, 'XX', unpack(zadd)) end
return lost
