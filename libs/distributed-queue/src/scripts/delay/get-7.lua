--[[
  Reads one task's state and record.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs  KEYS[4] dead  KEYS[5] errors  KEYS[6] done  KEYS[7] running
  ARGV[1] id
  Returns: { state, record or false, last error json or false, score or false, reservation or false }
]]
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/priority"

local id = ARGV[1]
local state, score = 'unknown', false
local rec = redis.call('HGET', KEYS[3], id)
local r = parseRecord(rec, 0)
local s = r and wsScore(KEYS[1], memberOf(r.seq, id), r.seq)
if not s and r and r.priority > 0 and wsScore(turnsOf(KEYS[1]), memberOf(r.seq, id), r.seq) then
  -- due, in the turn queue of its priority
  state, score = 'ready', string.format('%.0f', r.due)
elseif s then
  state = 'ready'
  if tonumber(s) > nowMs() then state = 'delayed' end
  score = s
else
  s = redis.call('ZSCORE', KEYS[2], id)
  if s then
    state, score = 'running', s
  else
    s = redis.call('ZSCORE', KEYS[4], id)
    if s then
      state, score = 'dead', s
    else
      if redis.call('LPOS', KEYS[6], id) then state = 'done' end
    end
  end
end
if state == 'unknown' or state == 'done' then return { state, false, false, score, false } end
return { state, rec or false, redis.call('HGET', KEYS[5], id) or false, score,
         redis.call('HGET', KEYS[7], id) or false }
