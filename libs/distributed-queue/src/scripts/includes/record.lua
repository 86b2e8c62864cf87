-- A task record (HASH jobs, field = id) is either
--   "<seq tag><payload json>" for a task that never ran: attempts 0, no flags, due = its score in waiting;
--   "<priority mark><seq tag><payload json>" for a task that never ran, with a priority, waiting in the
--     waiting set by its due time (its score). The mark: one letter 'a' to 'z' for a priority of 1 to 26, else
--     'O' to 'R' for a priority of 1 to 4 digits, then its digits. It takes the long form as it falls due
--     (into the turn queue or its group's queue, where its score is its turn, not its due time; see
--     take-due.lua): a delayed task's priority costs 1 byte (up to 26; 3 to 5 above), not the long form's ~20;
--   "~<attempts>:<seq>:<due ms>:<flags>:<payload json>" once a run failed, was lost or handed back.
-- The seq tag (see seq-tag.lua) begins with an upper-case letter, which no JSON text begins with.
-- flags: 'c' = cancel requested while running; 'p<n>' = the task's priority n (1 to 1000; none: 0, the most
-- urgent; a task with a priority always has the long form, see priority.lua); 'o<ms>' = the due time a
-- retried task of a group had before its first failed attempt: its place in its group (see groups.lua);
-- 'x<ms>' = the task's deadline (Redis clock): no attempt starts after it (see take-due.lua). Attempts count finished runs;
-- a reservation lives in the `running` hash (see lease.lua), so reserving and acknowledging never rewrite
-- the (large) record.
--- @include "includes/seq-tag"

-- The priority of a record of the short form with one (see above) and the index of its seq tag; nil for any
-- other form.
local function shortPriority(rec)
  local b = string.byte(rec, 1) or 0
  if b >= 97 and b <= 122 then return b - 96, 2 end
  local k = b - 78
  if k < 1 or k > 4 then return nil end
  return tonumber(string.sub(rec, 2, 1 + k)), 2 + k
end

-- The record of a task that never ran, waiting by its due time with priority `p` (0: none).
local function shortRecord(tag, p, payload)
  if p <= 0 then return tag .. payload end
  if p <= 26 then return string.char(96 + p) .. tag .. payload end
  local digits = string.format('%d', p)
  return string.char(78 + #digits) .. digits .. tag .. payload
end

-- Where the payload of a short record begins (after its priority and seq tag); nil for any other form.
local function shortPayloadAt(rec)
  local _, at = shortPriority(rec)
  local _, rest = splitSeqTag(rec, at)
  return rest
end

-- `due` fills in the due time of a short record (its score). nil when unreadable.
local function parseRecord(rec, due)
  if type(rec) ~= 'string' or rec == '' then return nil end
  if string.byte(rec, 1) ~= 126 then
    local priority, at = shortPriority(rec)
    local seq, rest = splitSeqTag(rec, at)
    if seq == nil or (at and priority == nil) then return nil end
    return { attempts = 0, seq = seq, due = tonumber(due or 0), flags = '', priority = priority or 0, payload = string.sub(rec, rest) }
  end
  local _, e, a, s, d, fl = string.find(rec, '^~(%d+):(%d+):(%d+):([%a%d]*):')
  if not e then return nil end
  local priority, place = 0, nil
  local p = string.match(fl, 'p(%d+)')
  if p then
    priority = tonumber(p)
    fl = (string.gsub(fl, 'p%d+', ''))
  end
  local o = string.match(fl, 'o(%d+)')
  if o then
    place = tonumber(o)
    fl = (string.gsub(fl, 'o%d+', ''))
  end
  local x = string.match(fl, 'x(%d+)')
  local expires = nil
  if x then
    expires = tonumber(x)
    fl = (string.gsub(fl, 'x%d+', ''))
  end
  return { attempts = tonumber(a), seq = tonumber(s), due = tonumber(d), flags = fl, priority = priority, place = place, expires = expires, payload = string.sub(rec, e + 1) }
end

local function encodeRecord(r)
  local fl = r.flags
  if (r.priority or 0) > 0 then fl = fl .. 'p' .. r.priority end
  if r.place then fl = fl .. string.format('o%.0f', r.place) end
  if r.expires then fl = fl .. string.format('x%.0f', r.expires) end
  return string.format('~%.0f:%.0f:%.0f:%s:', r.attempts, r.seq, r.due, fl) .. r.payload
end

-- A waiting task leaves the waiting set, due at `due` (its score): a short record with a priority takes the
-- long form, which keeps its due time (its score from now on is its turn). Others are left as they are.
local function recordFallsDue(jobs, id, rec, due)
  if type(rec) ~= 'string' or shortPriority(rec) == nil then return end
  local r = parseRecord(rec, due)
  if r then redis.call('HSET', jobs, id, encodeRecord(r)) end
end

-- What a reservation hands out: attempts so far and the payload, then the task's priority, due time, place
-- in its group and deadline.
-- NOTE: hot path: a task that never ran goes out as its whole record (tag and payload; the reader drops the
-- tag), with no parsing or copying here. nil when the record is missing or unreadable.
local function reservedPayload(rec, due)
  local b = type(rec) == 'string' and string.byte(rec, 1)
  if b and b >= 65 and b <= 78 then return 0, rec, 0, due end
  local r = parseRecord(rec, due)
  if r == nil then return nil end
  return r.attempts, r.payload, r.priority, r.due, r.place, r.expires
end
