--[[
  The owner acknowledges finished items and buries failed ones. Fenced by owner and epoch.
  KEYS[1] own  KEYS[2] inflight  KEYS[3] dead  KEYS[4] the partition's event stream
  KEYS[5] its followed flag (completions are logged only while it exists)
  KEYS[6] its recorded flag (a history writer runs: completions are logged, and entries carry each attempt's
          start and the machine)
  ARGV[1] machine id  ARGV[2] epoch  ARGV[3] dead letters kept  ARGV[4] event stream length (0: none written)
  ARGV[5] JSON object seq -> the finished items' last attempt ('' when not sent): its start ms for a first
          attempt, else [start ms, attempt] or [start ms, attempt, error name, error message] when the attempt
          before it failed, with that error's stack fifth when it had one (with the history on, that retry is
          logged as `retrying` before the completion, marked history-only: fleet listeners do not hear ordered
          retries, written late and only with the history on)
  ARGV[6] number of acked seqs A
  ARGV[7 .. 6+A] acked seqs, then pairs of seq, error json for buried items
  Returns: OUTCOME.OK (1) done, NOT_OURS (2) fenced (not the owner any more: nothing changed), NOT_FOUND (3)
  done, but some of the seqs were not in flight: the take that handed them out was lost (a failover), or an
  earlier call acked them. Those still waiting run again: their events must not be announced.
]]
--- @include "includes/outcome"
--- @include "includes/fmt"
--- @include "includes/is-owner"
--- @include "includes/now-ms"
--- @include "includes/item-body"
--- @include "includes/event-log"

-- NOTE: a history writer raises the recorded flag only (not the followed one, which is the fleet
-- listeners'): completions are logged while either exists, with or without starts to carry.
local recorded = tonumber(ARGV[4]) > 0 and redis.call('EXISTS', KEYS[6]) == 1
local starts = recorded and ARGV[5] ~= '' and cjson.decode(ARGV[5]) or nil

-- The last attempt of an item as ARGV[5] gives it: start ms (0 unknown), attempt (nil unknown), the error of
-- the attempt before it (nil when there was none).
local function attemptOf(seq)
  local v = starts and starts[seq]
  if type(v) == 'table' then
    local err = nil
    if v[3] ~= nil then err = { name = tostring(v[3]), message = tostring(v[4] or ''), stack = v[5] } end
    return tonumber(v[1]) or 0, tonumber(v[2]), err
  end
  if v == nil then return 0, nil, nil end
  return tonumber(v) or 0, 1, nil
end

-- Appends an event of the items (raw route items, their seqs) to the stream: ids, types, keys and errors;
-- with the history on, each attempt's start and this machine, and for a completion after a failed attempt
-- a `retrying` entry of that attempt first.
local function logItems(event, items, seqs, errs)
  local ids, types, keys, attempts = {}, {}, {}, {}
  for i, item in ipairs(items) do
    local ok, task = pcall(cjson.decode, itemBody(item) or '')
    if not ok or type(task) ~= 'table' then task = {} end
    ids[i], types[i], keys[i], attempts[i] = tostring(task.id or '?'), tostring(task.type or '?'), tostring(task.key or ''), 0
    if errs then attempts[i] = errs[i].attempts or 0 end
  end
  local s = {}
  if starts then
    local rIds, rTypes, rKeys, rAttempts, rErrs = {}, {}, {}, {}, {}
    for i, seq in ipairs(seqs) do
      local start, attempt, err = attemptOf(seq)
      s[i] = start
      if not errs and attempt then attempts[i] = attempt end
      if not errs and err and attempt then
        local n = #rIds + 1
        rIds[n], rTypes[n], rKeys[n], rAttempts[n], rErrs[n] = ids[i], types[i], keys[i], attempt - 1, err
      end
    end
    if #rIds > 0 then
      logEvent(KEYS[4], tonumber(ARGV[4]), 'retrying', { 'ids', cjson.encode(rIds), 't', cjson.encode(rTypes), 'k', cjson.encode(rKeys),
        'a', cjson.encode(rAttempts), 'err', cjson.encode(rErrs), 'h', '1' })
    end
  end
  local fields = { 'ids', cjson.encode(ids), 't', cjson.encode(types), 'k', cjson.encode(keys), 'a', cjson.encode(attempts) }
  if errs then
    local out = {}
    for i, e in ipairs(errs) do out[i] = { name = e.name, message = e.message, stack = e.stack } end
    fields[#fields + 1], fields[#fields + 2] = 'err', cjson.encode(out)
  end
  if starts then
    fields[#fields + 1], fields[#fields + 2] = 's', cjson.encode(s)
    fields[#fields + 1], fields[#fields + 2] = 'm', ARGV[1]
  end
  logEvent(KEYS[4], tonumber(ARGV[4]), event, fields)
end

local own, inflight, dead = KEYS[1], KEYS[2], KEYS[3]
if not isOwner(own, ARGV[1], ARGV[2]) then return OUTCOME.NOT_OURS end
local acked, logging = tonumber(ARGV[6]), tonumber(ARGV[4]) > 0
local now = nowMs()
-- Seqs named but not in flight.
local missing = 0
if acked > 0 then
  local seqs = {}
  for i = 7, 6 + acked do seqs[#seqs + 1] = ARGV[i] end
  if logging and (recorded or redis.call('EXISTS', KEYS[5]) == 1) then
    local items, found = {}, {}
    for i, item in ipairs(redis.call('HMGET', inflight, unpack(seqs))) do
      if item then items[#items + 1], found[#found + 1] = item, seqs[i] end
    end
    if #items > 0 then logItems('completed', items, found, nil) end
  end
  missing = acked - redis.call('HDEL', inflight, unpack(seqs))
end
local buried, buriedSeqs, errs = {}, {}, {}
for i = 7 + acked, #ARGV, 2 do
  local item = redis.call('HGET', inflight, ARGV[i])
  if item then
    redis.call('HDEL', inflight, ARGV[i])
    redis.call('RPUSH', dead, '{"item":' .. cjson.encode(item) .. ',"diedAt":' .. fmt(now) .. ',"error":' .. ARGV[i + 1] .. '}')
    if logging then
      local ok, e = pcall(cjson.decode, ARGV[i + 1])
      buried[#buried + 1], buriedSeqs[#buriedSeqs + 1] = item, ARGV[i]
      errs[#errs + 1] = (ok and type(e) == 'table') and e or { name = 'Error', message = ARGV[i + 1] }
    end
  else
    missing = missing + 1
  end
end
if #buried > 0 then logItems('dead', buried, buriedSeqs, errs) end
-- NOTE: the oldest letters past the kept number leave from the head, at most the buried and 1,000 more a call:
-- a maxDeadLetters lowered between deployments (10,000,000 to 100) drains over later burials, never in one call
if #ARGV > 6 + acked then
  local over = redis.call('LLEN', dead) - tonumber(ARGV[3])
  if over > 0 then redis.call('LTRIM', dead, math.min(over, (#ARGV - 6 - acked) / 2 + 1000), -1) end
end
if redis.call('HLEN', inflight) == 0 then redis.call('HSET', own, 'replays', 0) end
if missing > 0 then return OUTCOME.NOT_FOUND end
return OUTCOME.OK
