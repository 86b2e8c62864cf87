--[[
  Records a failed attempt: retries the task after a delay, or buries it in dead letters.
  Refused (NOT_OURS) unless the reservation is still ours, so a repeated call changes nothing.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs  KEYS[4] dead  KEYS[5] errors  KEYS[6] running  KEYS[7] event stream
  ARGV[1] id  ARGV[2] token  ARGV[3] retry delay ms (-1 = bury)  ARGV[4] error name  ARGV[5] error message
  ARGV[6] events channel  ARGV[7] event stream length (0: no events written)
  ARGV[8] (optional) service mode: the instance the failed delivery went to, kept with the error
  ARGV[9] (optional) the error's stack, bounded by the caller ('' or absent: none), kept with the error
  Returns: OUTCOME.NOT_OURS, RETRIED, BURIED or DROPPED (a cancel was requested)
]]
--- @include "includes/outcome"
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/flags"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/error-json"
--- @include "includes/bury"
--- @include "includes/lease"
--- @include "includes/requeue"
--- @include "includes/awaiting"
--- @include "includes/event-log"
--- @include "includes/task-logs"

local waiting, active, jobs, dead, errors, running = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id, delay = ARGV[1], tonumber(ARGV[3])
local log, logLen = KEYS[7], tonumber(ARGV[7])
if not redis.call('ZSCORE', active, id) then return OUTCOME.NOT_OURS end
local lease = redis.call('HGET', running, id)
if lease ~= ARGV[2] then return OUTCOME.NOT_OURS end
local attempt, due = parseLease(lease)
local now = nowMs()
local r = parseRecord(redis.call('HGET', jobs, id), due)
redis.call('ZREM', active, id)
redis.call('HDEL', running, id)
groupsFreed(waiting, { id }, ARGV[6], r == nil or hasFlag(r, 'c'))
local _, started = leaseAttemptStart(lease)
-- NOTE: every outcome of a failed attempt carries its error: readers make a `failed` event of it.
local stack = ARGV[9]
if stack == '' then stack = nil end
local fields = { 'ids', cjson.encode({ id }), 'a', cjson.encode({ attempt }), 'err', cjson.encode({ { name = ARGV[4], message = ARGV[5], stack = stack } }),
  's', cjson.encode({ started }), 'm', leaseHolder(lease) }
if r == nil or hasFlag(r, 'c') then
  redis.call('HDEL', jobs, id)
  redis.call('HDEL', errors, id)
  dropReports(jobs, { id })
  logEvent(log, logLen, 'cancelled', fields)
  tellWaiters(waitersChannel(log), 'cancelled', fields)
  return OUTCOME.DROPPED
end
r.attempts = attempt
local err = errorJson(ARGV[4], ARGV[5], attempt, now, ARGV[8], stack)
if delay >= 0 then
  local before = headScore(waiting)
  -- a task of a group keeps its place there: the due time it had before its first failed attempt
  if r.place == nil and groupOf(waiting, id) then r.place = due or r.due end
  r.due = now + delay
  redis.call('HSET', jobs, id, encodeRecord(r))
  redis.call('HSET', errors, id, err)
  requeue(waiting, r, id, r.due)
  wakeIfEarlier(ARGV[6], before, r.due, now)
  logEvent(log, logLen, 'retrying', fields)
  return OUTCOME.RETRIED
end
redis.call('HSET', jobs, id, encodeRecord(r))
bury(dead, errors, id, err, now)
logEvent(log, logLen, 'dead', fields)
tellWaiters(waitersChannel(log), 'dead', fields)
return OUTCOME.BURIED
