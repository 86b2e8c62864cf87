--[[
  Hands reserved tasks back (shutdown) without counting the attempt. Each goes back to its place: its
  original due time and submission order, ahead of tasks that became due after it. Stale reservations are
  skipped, so a repeated call changes nothing.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs  KEYS[4] running
  ARGV[1] events channel  ARGV[2..] pairs of id, token
  Returns: number of tasks handed back
]]
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/flags"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/lease"
--- @include "includes/requeue"

local waiting, active, jobs, running = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = nowMs()
local before = headScore(waiting)
local n, minDue = 0, nil
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  local lease = redis.call('HGET', running, id)
  if lease == ARGV[i + 1] and redis.call('ZREM', active, id) == 1 then
    redis.call('HDEL', running, id)
    local _, due = parseLease(lease)
    local r = parseRecord(redis.call('HGET', jobs, id), due)
    groupsFreed(waiting, { id }, ARGV[1], r == nil or hasFlag(r, 'c'))
    if r == nil or hasFlag(r, 'c') then
      redis.call('HDEL', jobs, id)
    else
      due = due or now
      requeue(waiting, r, id, due)
      if minDue == nil or due < minDue then minDue = due end
      n = n + 1
    end
  end
end
if n > 0 then wakeIfEarlier(ARGV[1], before, minDue, now) end
return n
