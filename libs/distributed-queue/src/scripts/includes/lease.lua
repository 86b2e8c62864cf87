-- A reservation (HASH running, field = id): "<stamp>:<attempt>:<due>:<holder>" (the worker's token is that
-- whole string; the holder, host/pid of the worker, is for inspection; reservations made before it was
-- recorded end at the due time). The due time is the one the task had in waiting, so that a lost or
-- handed-back reservation goes back to its place. Returns attempt, due (nil when absent or unreadable).
local function parseLease(v)
  if type(v) ~= 'string' then return nil end
  -- NOTE: one match of the prefix serves both forms (with and without the holder).
  local a, d = string.match(v, '^%d+:(%d+):(%d+)')
  if not a then return nil end
  return tonumber(a), tonumber(d)
end

-- A reservation's attempt and when it was made (epoch ms: its stamp is the Redis time in microseconds plus a
-- rank), in one match; 0, 0 when absent or unreadable. For the history.
local function leaseAttemptStart(v)
  local stamp, a = string.match(v or '', '^(%d+):(%d+):')
  if not stamp then return 0, 0 end
  return tonumber(a), math.floor(tonumber(stamp) / 1000)
end

-- The same two as the texts of JSON numbers, for the event log's arrays: one match, no conversion (a
-- third of the cost per logged task). '0', '0' when absent or unreadable.
local function leaseAttemptStartText(v)
  local ms, a = string.match(v or '', '^(%d+)%d%d%d:(%d+):')
  if not ms then return '0', '0' end
  return a, ms
end

-- A non-empty list of JSON number texts as a JSON array.
local function jsonNumbers(texts)
  return '[' .. table.concat(texts, ',') .. ']'
end

local function leaseHolder(v)
  return string.match(v or '', '^%d+:%d+:%d+:(.*)$') or ''
end
