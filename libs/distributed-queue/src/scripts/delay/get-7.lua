--[[
  Reads one task's state and record.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs  KEYS[4] dead  KEYS[5] errors  KEYS[6] done  KEYS[7] running
  ARGV[1] id
  Returns: { state, record or false, last error json or false, score or false, reservation or false,
             log lines or false, progress JSON or false (a running attempt's: see task-logs.lua) }
]]
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/groups"
--- @include "includes/task-logs"

local id = ARGV[1]
local state, score = 'unknown', false
local rec = redis.call('HGET', KEYS[3], id)
local r = parseRecord(rec, 0)
local where, s = nil, nil
if r then where, s = whereWaiting(KEYS[1], r, id) end
if where == WAITS_TURN or where == WAITS_GROUP then
  -- due, waiting its turn (of its priority, in its group): a bare record's due time is its turn
  state, score = 'ready', string.format('%.0f', r.due)
  if where == WAITS_GROUP and r.due == 0 then score = redis.call('ZSCORE', groupKey(KEYS[1], s), memberOf(r.seq, id)) end
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
      if redis.call('LPOS', KEYS[6], id) then
        state = 'done'
      elseif rec and redis.call('HEXISTS', KEYS[1] .. ':fp', id) == 1 then
        state = 'pending' -- a flow node waiting for its dependencies (see flow-park.lua)
      end
    end
  end
end
if state == 'unknown' then return { state, false, false, score, false, false, false } end
local logs = redis.call('HGET', logsKeyOf(KEYS[3]), id) or false
if state == 'done' then return { state, false, false, score, false, logs, false } end
local lease = redis.call('HGET', KEYS[7], id) or false
local progress = false
if lease then
  local v = redis.call('HGET', progressKeyOf(KEYS[3]), id)
  if v and string.sub(v, 1, #lease + 1) == lease .. '\n' then progress = string.sub(v, #lease + 2) end
end
return { state, rec or false, redis.call('HGET', KEYS[5], id) or false, score, lease, logs, progress }
