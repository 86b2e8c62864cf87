-- A task record (HASH jobs, field = id) is either
--   "<seq tag><payload json>" for a task that never ran: attempts 0, no flags, due = its score in waiting;
--   "~<attempts>:<seq>:<due ms>:<flags>:<payload json>" once a run failed, was lost or handed back.
-- The seq tag (see seq-tag.lua) begins with an upper-case letter, which no JSON text begins with.
-- flags: 'c' = cancel requested while running; 'p<n>' = the task's priority n (1 to 1000; none: 0, the most
-- urgent; a task with a priority always has the long form, see priority.lua); 'o<ms>' = the due time a
-- retried task of a group had before its first failed attempt: its place in its group (see groups.lua);
-- 'x<ms>' = the task's deadline (Redis clock): no attempt starts after it (see take-due.lua). Attempts count finished runs;
-- a reservation lives in the `running` hash (see lease.lua), so reserving and acknowledging never rewrite
-- the (large) record.
--- @include "includes/seq-tag"

-- `due` fills in the due time of a bare record (its score). nil when unreadable.
local function parseRecord(rec, due)
  if type(rec) ~= 'string' or rec == '' then return nil end
  if string.byte(rec, 1) ~= 126 then
    local seq, rest = splitSeqTag(rec)
    if seq == nil then return nil end
    return { attempts = 0, seq = seq, due = tonumber(due or 0), flags = '', priority = 0, payload = string.sub(rec, rest) }
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
