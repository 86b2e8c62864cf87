-- Shared helpers of the delay queue scripts.
-- A task record is "~<attempts>:<token>:<due ms>:<flags>:<payload json>", or the bare payload json for a
-- task that never ran (attempts 0, token 0, no flags, due = its score in waiting): saves memory per task.
-- flags: 'c' = cancel requested while running. The token field is kept at 0 (reservations live in `running`).
-- The attempts in a record count finished runs; a reservation lives in the `running` hash as
-- "<token>:<attempt>" (the worker's token is that whole string), so that reserving and acknowledging never
-- rewrite the (large) record.

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
