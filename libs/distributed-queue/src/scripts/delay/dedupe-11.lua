--[[
  Submits one task under a dedupe key (issue 31, item 5): while a task of the key stands (waiting or running),
  or within the key's window (`ttlMs` after the standing task's submit, or its last extension), a new submit
  does not add a task; `mode` says what it does instead:
    drop      nothing (the standing task goes on)
    extend    nothing, and the window restarts (now + ttlMs)
    replace   a waiting standing task takes the new payload (running: nothing)
    debounce  a waiting standing task takes the new payload and its due time moves to the new submit's; a
              running one (or none, within the window) is followed by a new task, which stands from then on
  Otherwise the task is added (as submit does) and stands for the key. Entries of keys whose task ended and
  whose window passed are dropped by a sweep of at most SWEEP keys per call: the hash holds O(active keys).
  A repeated call (the same request id) writes nothing and returns the first call's reply.
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] sequence counter  KEYS[4] the request id's bucket (request-reply.lua)
  KEYS[5] event stream  KEYS[6] its recorded flag  KEYS[7] the type's limits  KEYS[8] HASH dedupe key ->
  "<standing id>:<window end ms, 0: none>:<since ms>"  KEYS[9] ZSET dedupe key -> when the sweep looks at it next
  KEYS[10] active (running tasks)  KEYS[11] dead
  ARGV[1] events channel  ARGV[2] how long the reply is kept (ms)  ARGV[3] event stream length (0: none)
  ARGV[4] request id  ARGV[5] dedupe key  ARGV[6] mode  ARGV[7] ttl ms (0: none)
  ARGV[8..12] the task as submit-7 takes it: id ('' = generate), mode spec, value, group, payload
  Returns: { id (the standing task's), outcome ('created', 'exists': its id was taken, 'dropped',
           'extended', 'replaced', 'debounced') }
]]
--- @include "includes/now-ms"
--- @include "includes/submit-task"
--- @include "includes/request-reply"
--- @include "includes/groups"
--- @include "includes/move-due"

local SWEEP = 20 -- keys the sweep looks at per call
local FIRST_CHECK_MS = 1000 -- a new key is first looked at this much later (most tasks end by then), or at its window's end
local RECHECK_MS = 60000 -- a key whose task still stands is looked at again after as long as it stood, at most this

local waiting, jobs, dd, ddIndex, active, dead = KEYS[1], KEYS[2], KEYS[8], KEYS[9], KEYS[10], KEYS[11]
local previous = earlierReply(KEYS[4], ARGV[4])
if previous then
  local id, outcome = string.match(previous, '^(.*)\n(%a+)$')
  return { id, outcome }
end
local now = nowMs()

-- A task stands while its record exists and it is not dead.
local function stands(id)
  return id ~= nil and redis.call('HEXISTS', jobs, id) == 1 and not redis.call('ZSCORE', dead, id)
end

-- The sweep: keys whose time to look came. Ended and past their window: dropped; else looked at later.
local due = redis.call('ZRANGEBYSCORE', ddIndex, '-inf', now, 'LIMIT', 0, SWEEP)
for _, key in ipairs(due) do
  local entry = redis.call('HGET', dd, key)
  local id, windowEnd, since = nil, 0, now
  if entry then id, windowEnd, since = string.match(entry, '^(.*):(%d+):(%d+)$') end
  windowEnd = tonumber(windowEnd or '0')
  if entry and stands(id) then
    -- NOTE: a key is looked at again after as long as it stood (1 s, 2 s, 4 s... up to RECHECK_MS): ended
    -- keys go within about their age, and long-standing ones cost the sweep little
    redis.call('ZADD', ddIndex, now + math.min(RECHECK_MS, math.max(FIRST_CHECK_MS, now - tonumber(since or now))), key)
  elseif entry and windowEnd > now then
    redis.call('ZADD', ddIndex, windowEnd, key)
  else
    redis.call('HDEL', dd, key)
    redis.call('ZREM', ddIndex, key)
  end
end

local key, mode, ttl = ARGV[5], ARGV[6], tonumber(ARGV[7])
local entry = redis.call('HGET', dd, key)
local standing, windowEnd = nil, 0
if entry then standing, windowEnd = string.match(entry, '^(.*):(%d+):%d+$') end
windowEnd = tonumber(windowEnd or '0')
local alive = stands(standing)
local running = alive and redis.call('ZSCORE', active, standing) ~= false

-- Keeps the key's entry: its standing task and window; the sweep looks at it once either may have ended.
local function keep(id, ends)
  redis.call('HSET', dd, key, id .. ':' .. string.format('%.0f', ends) .. ':' .. string.format('%.0f', now))
  redis.call('ZADD', ddIndex, math.max(ends, now + FIRST_CHECK_MS), key)
end

-- The standing waiting task takes the new payload (its record keeps its form: see record.lua).
local function replacePayload(id, payload)
  local rec = redis.call('HGET', jobs, id)
  if string.byte(rec, 1) == 126 then
    local r = parseRecord(rec)
    r.payload = payload
    redis.call('HSET', jobs, id, encodeRecord(r))
  else
    redis.call('HSET', jobs, id, string.sub(rec, 1, shortPayloadAt(rec) - 1) .. payload)
  end
end

local id, outcome
if (alive or windowEnd > now) and not (mode == 'debounce' and (running or not alive)) then
  id = standing
  outcome = 'dropped'
  if mode == 'extend' and ttl > 0 then
    windowEnd = now + ttl
    keep(id, windowEnd)
    outcome = 'extended'
  elseif (mode == 'replace' or mode == 'debounce') and alive and not running then
    replacePayload(id, ARGV[12])
    outcome = 'replaced'
    if mode == 'debounce' then
      local value = tonumber(ARGV[10])
      local dueAt = value
      if string.byte(ARGV[9], 1) == 100 then dueAt = now + value end -- 'd'
      local rec = redis.call('HGET', jobs, id)
      if moveDue(waiting, jobs, id, rec, parseRecord(rec), dueAt, ARGV[1], now) then outcome = 'debounced' end
    end
  end
else
  local streamLen = tonumber(ARGV[3])
  local b = submitBatch(waiting, jobs, KEYS[7], now, streamLen > 0 and redis.call('EXISTS', KEYS[6]) == 1)
  local seq = redis.call('INCR', KEYS[3])
  local created
  id, created = submitTask(b, seq, ARGV[8], ARGV[9], tonumber(ARGV[10]), ARGV[11], ARGV[12])
  submitEnd(b, ARGV[1], KEYS[5], streamLen)
  outcome = created == 1 and 'created' or 'exists'
  keep(id, ttl > 0 and now + ttl or 0)
end
keepReply(KEYS[4], ARGV[4], id .. '\n' .. outcome, ARGV[2])
return { id, outcome }
