-- Shared helpers of the delay queue scripts.
-- A task record is "~<attempts>:<token>:<due ms>:<flags>:<payload json>", or the bare payload json for a
-- task that never ran (attempts 0, token 0, no flags, due = its score in waiting): saves memory per task.
-- flags: 'c' = cancel requested while running. The token field is kept at 0 (reservations live in `running`).
-- The attempts in a record count finished runs; a reservation lives in the `running` hash as
-- "<token>:<attempt>" (the worker's token is that whole string), so that reserving and acknowledging never
-- rewrite the (large) record.

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- `due` fills in the due time of a bare record (its score).
local function parseRecord(rec, due)
  if type(rec) ~= 'string' or rec == '' then return nil end
  if string.byte(rec, 1) ~= 126 then
    return { attempts = 0, token = 0, due = tonumber(due or 0), flags = '', payload = rec }
  end
  local _, e, a, tok, d, fl = string.find(rec, '^~(%d+):(%d+):(%d+):(%a*):')
  if not e then return nil end
  return { attempts = tonumber(a), token = tonumber(tok), due = tonumber(d), flags = fl,
           payload = string.sub(rec, e + 1) }
end

local function encodeRecord(r)
  return string.format('~%.0f:%.0f:%.0f:%s:', r.attempts, r.token, r.due, r.flags) .. r.payload
end

-- Base-36 text of a positive integer: short generated task ids.
local function base36(n)
  local digits, out = '0123456789abcdefghijklmnopqrstuvwxyz', ''
  repeat
    local d = n % 36
    out = string.sub(digits, d + 1, d + 1) .. out
    n = math.floor(n / 36)
  until n == 0
  return out
end

local function hasFlag(r, f)
  return string.find(r.flags, f, 1, true) ~= nil
end

local function withFlag(r, f)
  if not hasFlag(r, f) then r.flags = r.flags .. f end
end

-- Score of the earliest waiting task, or nil.
local function headScore(waitingKey)
  local head = redis.call('ZRANGE', waitingKey, 0, 0, 'WITHSCORES')
  if head[2] then return tonumber(head[2]) end
  return nil
end

-- Wake the workers when the earliest due time moved earlier and nothing was ready before:
-- when something was ready already, workers are busy with it and fetch again as slots free.
local function wakeIfEarlier(channel, before, due, now)
  if before == nil or (due < before and before > now) then
    local delay = due - now
    if delay < 0 then delay = 0 end
    redis.call('PUBLISH', channel, 'w:' .. string.format('%.0f', delay))
  end
end

local function errorJson(name, message, attempts, now)
  return cjson.encode({ name = name, message = message, attempts = attempts, failedAt = now })
end

-- Moves an id to dead letters with a reason (the record stays in jobs for inspection).
local function bury(deadKey, errorsKey, id, err, now)
  redis.call('ZADD', deadKey, now, id)
  redis.call('HSET', errorsKey, id, err)
end

-- A reservation: "<token>:<attempt>" -> token, attempt (nil when absent or unreadable).
local function parseLease(v)
  if type(v) ~= 'string' then return nil end
  local t, a = string.match(v, '^(%d+):(%d+)$')
  if not t then return nil end
  return tonumber(t), tonumber(a)
end

-- Splits ARGV[from..] pairs of id, token into the reservations still ours (in active, same token) and the
-- others. The token a worker holds is the reservation string itself, compared as it is.
local function checkReservations(activeKey, runningKey, from)
  local ids, tokens = {}, {}
  for i = from, #ARGV, 2 do
    ids[#ids + 1] = ARGV[i]
    tokens[#tokens + 1] = ARGV[i + 1]
  end
  local ours, others = {}, {}
  if #ids == 0 then return ours, others end
  local scores = redis.call('ZMSCORE', activeKey, unpack(ids))
  local leases = redis.call('HMGET', runningKey, unpack(ids))
  for i = 1, #ids do
    if scores[i] and leases[i] == tokens[i] then ours[#ours + 1] = ids[i]
    else others[#others + 1] = ids[i] end
  end
  return ours, others
end
