--[[
  Appends ordered tasks to one partition, applying the reject strategy when it is full.
  KEYS[1] partition list  KEYS[2] partition record (own)
  ARGV[1] partition count the producer used  ARGV[2] max length  ARGV[3] strategy (Discard|DiscardOldest|Exception)
  ARGV[4] events channel  ARGV[5] partition number  ARGV[6] lua log (0/1)  ARGV[7..] task json
  Returns: { 'STALE', n } when the producer's partition count is not the partition's;
           { 'FULL' } (Exception, nothing written past the first full point: items before it are queued);
           else per task: 'q' queued, 'd' discarded, or 'o:<dropped json>' (queued, oldest dropped)
]]
--- @include "includes/fmt"
--- @include "includes/route-log"

local list, own = KEYS[1], KEYS[2]
local n = redis.call('HGET', own, 'n')
if n ~= ARGV[1] then return { 'STALE', n or '' } end
local max, strategy = tonumber(ARGV[2]), ARGV[3]
local wasEmpty = redis.call('LLEN', list) == 0
local out = {}
for i = 7, #ARGV do
  local len = redis.call('LLEN', list)
  local accept = true
  if len >= max then
    if strategy == 'Exception' then
      out[#out + 1] = 'FULL'
      break
    elseif strategy == 'DiscardOldest' then
      local oldest = redis.call('LPOP', list)
      out[#out + 1] = 'o:' .. string.gsub(oldest, '^%d+:', '', 1)
    else
      out[#out + 1] = 'd'
      accept = false
    end
  else
    out[#out + 1] = 'q'
  end
  if accept then
    local seq = redis.call('HINCRBY', own, 'seq', 1)
    redis.call('RPUSH', list, fmt(seq) .. ':' .. ARGV[i])
  end
end
if wasEmpty and redis.call('LLEN', list) > 0 then
  redis.call('PUBLISH', ARGV[4], 'p:' .. ARGV[5])
end
routeLog(ARGV[6], 'route-push', KEYS[1], #ARGV - 6)
return out
