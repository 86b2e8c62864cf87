-- The results of finished tasks: HASH <results> id -> the handler's return value as JSON, or '!<bytes>'
-- when it was not kept (larger than maxResultBytes, or not JSON: -1), kept while the id is among the last
-- keepDone finished ids (LIST <done>, newest first). An ack's token carries its task's result after a
-- newline (see check-reservations.lua). A type whose handlers return nothing pays one EXISTS per ack call.
-- NOTE: an id finished twice (submitted again after it finished) may lose its newer result when its older
-- entry falls out of `done`.

-- Drops the `count` oldest of the `len` ids of `done` (its tail), with their results and log lines when
-- `reports` (false: the type keeps neither).
local function dropOldest(resultsKey, doneKey, logsKey, len, count, reports)
  if reports then
    local gone = redis.call('LRANGE', doneKey, len - count, len - 1)
    redis.call('HDEL', resultsKey, unpack(gone))
    redis.call('HDEL', logsKey, unpack(gone))
  end
  -- NOTE: LTRIM 0 -1 would keep the whole list: dropping every id deletes it
  if count >= len then redis.call('DEL', doneKey) else redis.call('LTRIM', doneKey, 0, len - count - 1) end
end

-- Pushes `ids` (acked) onto `done`, keeps their results (`results[i]`: text, or false for none), trims
-- `done` to keepDone and drops the results and log lines (HASH `logsKey`, see task-logs.lua) of the ids it
-- trimmed (at most #ids + 1000 per call).
local function finishDone(resultsKey, doneKey, ids, results, keepDone, logsKey)
  local set, unset = {}, {}
  for i, id in ipairs(ids) do
    local r = results[i]
    if r then
      set[#set + 1], set[#set + 2] = id, r
    else
      unset[#unset + 1] = id
    end
  end
  local len = redis.call('LPUSH', doneKey, unpack(ids))
  -- NOTE: the oldest ids past keepDone leave from the tail, at most #ids + 1000 a call, each with its result
  -- and log lines: a keepDone lowered between deployments (1,000,000 to 10) drains over later acks, never in
  -- one call, and leaves no result behind
  local excess = math.min(len - keepDone, #ids + 1000)
  local any = #set > 0 or redis.call('EXISTS', resultsKey, logsKey) > 0
  if any then
    -- an id finished again without a result must not show the result of its earlier run
    if #unset > 0 then redis.call('HDEL', resultsKey, unpack(unset)) end
    if #set > 0 then redis.call('HSET', resultsKey, unpack(set)) end
  end
  if excess > 0 then dropOldest(resultsKey, doneKey, logsKey, len, excess, any) end
end

-- With keepDone 0, what an earlier setting kept leaves: the 1000 oldest ids a call, with their results and
-- log lines (a type that kept 1,000,000 and now keeps none is emptied over later acks).
local function drainDone(resultsKey, doneKey, logsKey)
  local len = redis.call('LLEN', doneKey)
  if len > 0 then dropOldest(resultsKey, doneKey, logsKey, len, math.min(len, 1000), true) end
end

-- The results of `ids` as a JSON array of texts (false for none), for an event's 'r' field; nil when none has one.
local function resultsField(results, n)
  local any = false
  local out = {}
  for i = 1, n do
    out[i] = results[i] or false
    if results[i] then any = true end
  end
  if not any then return nil end
  return cjson.encode(out)
end
