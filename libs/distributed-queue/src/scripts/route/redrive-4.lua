--[[
  Re-drives the dead letters of one partition in one step: the oldest `limit` go back to the tail of the
  partition's list with new seqs (behind what is queued now) and Redis's time now as their `at`, and leave
  the dead list. Unreadable ones are dropped. Only what fits under the partition's max length moves; the rest stays dead.
  Idempotent per request id: a repeated call (a re-sent command) returns the first reply, moving nothing.
  KEYS[1] dead  KEYS[2] list  KEYS[3] own  KEYS[4] the request id's bucket (see request-reply.lua)
  ARGV[1] limit  ARGV[2] max length  ARGV[3] events channel  ARGV[4] partition number  ARGV[5] request ttl ms
  ARGV[6] request id
  Returns: how many tasks were re-driven
]]
--- @include "includes/fmt"
--- @include "includes/dead-body"
--- @include "includes/now-ms"
--- @include "includes/request-reply"

local dead, list, own, request = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local replied = earlierReply(request, ARGV[6])
if replied then return tonumber(replied) end
local length = redis.call('LLEN', list)
local count = math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - length)
local moved = 0
if count > 0 then
  local letters = redis.call('LRANGE', dead, 0, count - 1)
  local at = fmt(nowMs())
  for _, letter in ipairs(letters) do
    local body = deadBody(letter)
    if body then
      local seq = redis.call('HINCRBY', own, 'seq', 1)
      redis.call('RPUSH', list, fmt(seq) .. ':' .. at .. ':' .. body)
      moved = moved + 1
    end
  end
  if #letters > 0 then redis.call('LTRIM', dead, #letters, -1) end
  if length == 0 and moved > 0 then redis.call('PUBLISH', ARGV[3], 'p:' .. ARGV[4]) end
end
keepReply(request, ARGV[6], moved, ARGV[5])
return moved
