-- Shared helpers of the delay queue scripts.
-- A task record is "<attempts>:<token>:<due ms>:<flags>:<payload json>".
-- flags: 'c' = cancel requested while running, 'e' = an error is stored in the errors hash.

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function parseRecord(rec)
  if type(rec) ~= 'string' then return nil end
  local _, e, a, tok, due, fl = string.find(rec, '^(%d+):(%d+):(%d+):(%a*):')
  if not e then return nil end
  return { attempts = tonumber(a), token = tonumber(tok), due = tonumber(due), flags = fl,
           payload = string.sub(rec, e + 1) }
end

local function encodeRecord(r)
  return string.format('%.0f:%.0f:%.0f:%s:', r.attempts, r.token, r.due, r.flags) .. r.payload
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
