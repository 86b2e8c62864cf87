--[[
  The owner takes work from its partition: first the in-flight batch left by a previous owner (replayed, in
  seq order), else up to `batch` items moved from the list head into the in-flight hash.
  Fenced: only the owner with the current epoch and an unexpired lease gets anything; a revoking partition
  gives nothing (its owner hands over what is in flight, see route-release), nor does a paused one (flag
  `paused` in own, see route-pause): what is in flight stays there for the same owner, and taken again after
  the resume by the same epoch it counts no replay.
  Idempotent for its runner: `tk` in own is the epoch that last took the in-flight batch, so a repeated take
  (a re-sent command, or a take after a hand-over the scheduler called off) returns that batch again
  without counting a replay and without taking a second batch.
  KEYS[1] list  KEYS[2] own  KEYS[3] inflight  KEYS[4] dead
  ARGV[1] machine id  ARGV[2] epoch  ARGV[3] batch size  ARGV[4] max replays before the first in-flight
  item is buried  ARGV[5] lua log (0/1)
  Returns: { outcome, replays, items... } outcome: OUTCOME.OK, EMPTY, NOT_OURS, LEASE_EXPIRED, REVOKING, GATED
  or PAUSED
]]
--- @include "includes/outcome"
--- @include "includes/now-ms"
--- @include "includes/route-log"
--- @include "includes/seq-of"

local list, own, inflight, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local r = redis.call('HMGET', own, 'owner', 'epoch', 'state', 'lease', 'barrier', 'replays', 'tk', 'handed', 'paused')
local epoch = tonumber(ARGV[2])
if r[1] ~= ARGV[1] or tonumber(r[2]) ~= epoch then return { OUTCOME.NOT_OURS, 0 } end
local now = nowMs()
if tonumber(r[4] or 0) < now then return { OUTCOME.LEASE_EXPIRED, 0 } end
if r[3] == 'revoking' then return { OUTCOME.REVOKING, 0 } end
if r[9] == '1' then return { OUTCOME.PAUSED, 0 } end
redis.call('HSET', own, 'touched', now)

-- 1. Replay what a previous owner left in flight.
local left = redis.call('HGETALL', inflight)
if #left > 0 then
  local items = {}
  for i = 2, #left, 2 do items[#items + 1] = left[i] end
  table.sort(items, function(a, b) return seqOf(a) < seqOf(b) end)
  local replays = tonumber(r[6] or 0)
  if tonumber(r[7] or -1) ~= epoch then
    -- NOTE: a batch handed back (route-release, route-leave) did not fail: its replay is not counted.
    if r[8] ~= '1' then replays = redis.call('HINCRBY', own, 'replays', 1) end
    redis.call('HSET', own, 'tk', epoch, 'handed', 0)
    if replays > tonumber(ARGV[4]) then
      -- A batch that keeps killing its owners: bury its first item so the partition moves on.
      local first = table.remove(items, 1)
      redis.call('HDEL', inflight, tostring(seqOf(first)))
      redis.call('RPUSH', dead, cjson.encode({ item = first, diedAt = now, error = {
        name = 'LeaseExpiredError', message = 'its owner was lost ' .. (replays - 1) .. ' times while running it' } }))
      redis.call('HSET', own, 'replays', 0)
      if #items == 0 then return { OUTCOME.EMPTY, 0 } end
      replays = 0
    end
  end
  routeLog(ARGV[5], 'route-take replay', list, #items)
  local out = { OUTCOME.OK, replays }
  for _, item in ipairs(items) do out[#out + 1] = item end
  return out
end

-- 2. Take new items; past a resize barrier they wait for the gate.
local batch = tonumber(ARGV[3])
local barrier = tonumber(r[5] or -1)
local head = redis.call('LRANGE', list, 0, batch - 1)
if #head == 0 then return { OUTCOME.EMPTY, 0 } end
local count = #head
if barrier >= 0 then
  count = 0
  for _, item in ipairs(head) do
    if seqOf(item) > barrier then break end
    count = count + 1
  end
  if count == 0 then return { OUTCOME.GATED, 0 } end
end
redis.call('LTRIM', list, count, -1)
local hset, out = {}, { OUTCOME.OK, 0 }
for i = 1, count do
  hset[#hset + 1] = tostring(seqOf(head[i]))
  hset[#hset + 1] = head[i]
  out[#out + 1] = head[i]
end
redis.call('HSET', inflight, unpack(hset))
redis.call('HSET', own, 'tk', epoch, 'handed', 0)
routeLog(ARGV[5], 'route-take', list, count)
return out
