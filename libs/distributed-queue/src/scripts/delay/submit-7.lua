--[[
  Adds tasks unless their id exists; wakes workers when the earliest due time moved earlier. Each task
  takes the next number of the type's sequence, which orders tasks due at the same time (FIFO) and names
  the tasks submitted without an id ('#' .. hex).
  A repeated call (the same request id, e.g. re-sent by the client after a lost reply) writes nothing and
  returns the first call's reply: its generated ids are the same, so nothing is created twice.
  KEYS[1] waiting (see waiting-set.lua)  KEYS[2] jobs  KEYS[3] sequence counter  KEYS[4] the request id's
  bucket (see request-reply.lua; the reply kept ARGV[2] ms)
  KEYS[5] event stream  KEYS[6] its recorded flag (while it exists, submits are logged for the history)
  KEYS[7] the type's limits (field 'dp': the default priority its workers configure; see priority.lua)
  ARGV[1] events channel  ARGV[2] how long the reply is kept (ms)  ARGV[3] event stream length (0: none)
  ARGV[4] request id
  ARGV[5..] per task 5 values: id ('' = generate), mode ('d' = delay ms, 'a' = absolute ms, then the task's
  priority when given, e.g. 'd5'; without one, the type's default; then its deadline when it has one:
  'x<ms>' absolute or 'y<ms>' from now, e.g. 'd5y60000'; see record.lua), value, group ('' = none; see
  groups.lua), payload json
  Returns: { now, then per task: id, created flag (1/0) }
]]
--- @include "includes/now-ms"
--- @include "includes/submit-task"
--- @include "includes/request-reply"

local now = nowMs()
local n = (#ARGV - 4) / 5
local out = { now }
local previous = earlierReply(KEYS[4], ARGV[4])
local seq
if previous then
  local first, flags = string.match(previous, '^(%d+):(%d*)$')
  seq = tonumber(first)
  for i = 1, n do
    seq = seq + 1
    local id = ARGV[i * 5]
    if id == '' then id = '#' .. string.format('%x', seq) end
    out[#out + 1] = id
    out[#out + 1] = tonumber(string.sub(flags, i, i))
  end
  return out
end

local streamLen = tonumber(ARGV[3])
local b = submitBatch(KEYS[1], KEYS[2], KEYS[7], now, streamLen > 0 and redis.call('EXISTS', KEYS[6]) == 1)
seq = redis.call('INCRBY', KEYS[3], n) - n
local first = seq
local flags = {}
for i = 5, #ARGV, 5 do
  seq = seq + 1
  local id, created = submitTask(b, seq, ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3], ARGV[i + 4])
  out[#out + 1] = id
  out[#out + 1] = created
  flags[#flags + 1] = created
end
keepReply(KEYS[4], ARGV[4], string.format('%.0f', first) .. ':' .. table.concat(flags), ARGV[2])
submitEnd(b, ARGV[1], KEYS[5], streamLen)
return out
