--[[
  Cancels a task by id: a waiting task is removed; a running one is flagged so it is not retried, and its
  worker is told to abort it.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs  KEYS[4] errors  KEYS[5] event stream
  ARGV[1] id  ARGV[2] events channel  ARGV[3] event stream length (0: no events written)
  Returns: OUTCOME.CANCELLED, CANCEL_REQUESTED (running) or NOT_FOUND
]]
--- @include "includes/outcome"
--- @include "includes/record"
--- @include "includes/flags"
--- @include "includes/event-log"
--- @include "includes/groups"
--- @include "includes/awaiting"
--- @include "includes/task-logs"

local waiting, active, jobs, errors = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]
local r = parseRecord(redis.call('HGET', jobs, id), 0)
if r and removeTask(waiting, r, id) == 1 then
  redis.call('HDEL', jobs, id)
  redis.call('HDEL', errors, id)
  dropReports(jobs, { id })
  local fields = { 'ids', cjson.encode({ id }), 'a', cjson.encode({ r.attempts }) }
  logEvent(KEYS[5], tonumber(ARGV[3]), 'cancelled', fields)
  tellWaiters(waitersChannel(KEYS[5]), 'cancelled', fields)
  return OUTCOME.CANCELLED
end
if redis.call('ZSCORE', active, id) then
  if r then
    withFlag(r, 'c')
    redis.call('HSET', jobs, id, encodeRecord(r))
  end
  redis.call('PUBLISH', ARGV[2], 'c:' .. id)
  return OUTCOME.CANCEL_REQUESTED
end
return OUTCOME.NOT_FOUND
