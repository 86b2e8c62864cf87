--[[
  The worker's one hot-path call: acknowledges finished tasks, recovers expired reservations, then
  reserves up to `count` due tasks into the active set with a lease and a fresh token, in (due time,
  submission) order, a priority's due tasks in their turn (see priority.lua).
  A repeated call (the same request id, e.g. re-sent by the client after a lost reply) reserves nothing
  new: it returns the reservations the first call made that are still held. The consumer's request key
  holds its last call's request id and reservations for one lease (one key per consumer, overwritten).
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs  KEYS[4] dead  KEYS[5] errors  KEYS[6] done  KEYS[7] running
  KEYS[8] the consumer's request key  KEYS[9] paused flag (while it exists, nothing is recovered or reserved)
  KEYS[10] the type's event stream  KEYS[11] its followed flag (completions are logged only while it exists)
  KEYS[12] its recorded flag (a history writer runs: completions carry their start time and worker; when it
           holds 's', reservations are logged as `started` too)
  KEYS[13] the waiting set as earlier versions kept it (one ZSET): moved into `waiting` a batch per take
  KEYS[14] the type's limits (fleet-wide concurrency and rate limit; see admission.lua): reserve no more than they allow
  KEYS[15] the results of finished tasks (see results.lua)
  ARGV[1] count to reserve (0 = ack only)
  ARGV[2] lease ms
  ARGV[3] max attempts (recovered tasks past it are buried)
  ARGV[4] finished ids to keep in `done` (0 = none)
  ARGV[5] max expired reservations to recover in this call
  ARGV[6] events channel
  ARGV[7] request id of this call
  ARGV[8] event stream length (0: no events written)
  ARGV[9] who takes (host/pid): recorded in each reservation, for inspection
  ARGV[10..] pairs of id, token to acknowledge (the token may carry the task's result: see results.lua)
  Returns: { now, ms until the next due task or the next start the limits allow (-1: none or not asked;
             -2: held back by the fleet's concurrency, look again as tasks finish; 0: look again now), refused ack ids,
             the reservations' stamp, then per reserved task: id, attempt, due, payload (a never-run task's
             whole record: seq tag and payload) }. A reservation's token is "<stamp>:<attempt>:<due>:<ARGV[9]>"
             (see lease.lua): the caller builds it, so the reply does not carry it per task.
]]
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/flags"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/error-json"
--- @include "includes/bury"
--- @include "includes/lease"
--- @include "includes/check-reservations"
--- @include "includes/requeue"
--- @include "includes/event-log"
--- @include "includes/waiting-set"
--- @include "includes/admission"
--- @include "includes/take-due"
--- @include "includes/results"
--- @include "includes/awaiting"
--- @include "includes/task-logs"

local waiting, active, jobs, dead, errors, done, running = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local count, lease, maxAttempts = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local keepDone, recoverLimit = tonumber(ARGV[4]), tonumber(ARGV[5])
local log, logLen = KEYS[10], tonumber(ARGV[8])
local now, stamp = nowMsAndStamp()

-- 0. A repeat of a call that reserved tasks: hand back the same reservations, nothing else.
local previous = count > 0 and redis.call('GET', KEYS[8])
local rid = ARGV[7] .. '\n'
if previous and string.sub(previous, 1, #rid) == rid then
  -- "<rid>\n<stamp>\n<ids json>": the reservations that call made are those still holding its stamp
  local first, ids = string.match(previous, '^(%d+)\n(.*)$', #rid + 1)
  local out = { now, 0, {}, first or '' }
  local mine = (first or '') .. ':'
  for _, id in ipairs(first and cjson.decode(ids) or {}) do
    local token = redis.call('HGET', running, id)
    if token and string.sub(token, 1, #mine) == mine then
      local attempt, due = parseLease(token)
      local _, payload = reservedPayload(redis.call('HGET', jobs, id), due)
      if payload then
        out[#out + 1] = id
        out[#out + 1] = attempt
        out[#out + 1] = due
        out[#out + 1] = payload
      end
    end
  end
  return out
end

-- The recorded flag, read once when needed: false (no history writer), 'o' or 's' (starts logged too).
local recordedFlag = nil
local function recordedValue()
  if recordedFlag == nil then recordedFlag = (logLen > 0 and redis.call('GET', KEYS[12])) or false end
  return recordedFlag
end

local limits = admissionRead(KEYS[14])

-- 1. Acknowledge: only while the reservation is still ours (in active, same token).
local ok, refused, okTokens, okResults = checkReservations(active, running, 10)
-- Waiters, told of every end this call makes (false: none waits)
local waiters = false
if #ok > 0 then
  admissionFreed(limits, ARGV[6])
  groupsFreed(waiting, ok, ARGV[6], true)
  redis.call('ZREM', active, unpack(ok))
  redis.call('HDEL', jobs, unpack(ok))
  redis.call('HDEL', running, unpack(ok))
  redis.call('HDEL', errors, unpack(ok))
  if keepDone > 0 then finishDone(KEYS[15], done, ok, okResults, keepDone, logsKeyOf(jobs))
  else
    redis.call('HDEL', logsKeyOf(jobs), unpack(ok))
    if redis.call('EXISTS', done) == 1 then drainDone(KEYS[15], done, logsKeyOf(jobs)) end
  end
  local recorded = recordedValue() ~= false
  waiters = waitersChannel(log)
  local logged = recorded or (logLen > 0 and redis.call('EXISTS', KEYS[11]) == 1)
  if logged or waiters then
    local attempts, starts = {}, {}
    for i, token in ipairs(okTokens) do
      attempts[i], starts[i] = leaseAttemptStartText(token)
    end
    local fields = { 'ids', cjson.encode(ok), 'a', jsonNumbers(attempts) }
    local r = resultsField(okResults, #ok)
    if r then
      fields[#fields + 1], fields[#fields + 2] = 'r', r
    end
    if recorded then
      fields[#fields + 1], fields[#fields + 2], fields[#fields + 3], fields[#fields + 4] = 's', jsonNumbers(starts), 'm', ARGV[9]
    end
    if logged then logEvent(log, logLen, 'completed', fields) end
    tellWaiters(waiters, 'completed', fields)
  end
end

if count <= 0 then return { now, -1, refused } end
-- NOTE: a paused type still takes acks: running tasks finish; the resume publishes a wake-up.
if redis.call('EXISTS', KEYS[9]) == 1 then return { now, -1, refused } end
if redis.call('EXISTS', KEYS[13]) == 1 then wsMigrate(KEYS[13], waiting, 1000) end

-- 2. Recover reservations whose lease expired (their worker died or stalled). The attempt counts; past
--    maxAttempts the task is buried instead of run again. The others go back to their place in waiting
--    (original due time and submission order), so they run before tasks that became due after them.
local expired = redis.call('ZRANGEBYSCORE', active, '-inf', now, 'LIMIT', 0, recoverLimit)
if #expired > 0 then
  local before = headScore(waiting)
  redis.call('ZREM', active, unpack(expired))
  local recs = redis.call('HMGET', jobs, unpack(expired))
  local leases = redis.call('HMGET', running, unpack(expired))
  redis.call('HDEL', running, unpack(expired))
  local minDue = nil
  local back, backA, lost, lostA, lostErr, dropped, droppedA = {}, {}, {}, {}, {}, {}, {}
  groupsFreed(waiting, expired, ARGV[6], false)
  for i, id in ipairs(expired) do
    local attempt, due = parseLease(leases[i])
    local r = parseRecord(recs[i], due or now)
    if r == nil then
      bury(dead, errors, id, errorJson('CorruptTaskError', 'task record is missing or unreadable', 0, now), now)
      lost[#lost + 1], lostA[#lostA + 1] = id, 0
      lostErr[#lostErr + 1] = { name = 'CorruptTaskError', message = 'task record is missing or unreadable' }
    elseif hasFlag(r, 'c') then
      -- a cancel requested while its worker was gone: done now (no attempt failed: the lease only ran out)
      redis.call('HDEL', jobs, id)
      redis.call('HDEL', errors, id)
      redis.call('HDEL', waiting .. ':gof', id)
      dropped[#dropped + 1], droppedA[#droppedA + 1] = id, attempt or r.attempts
    else
      r.attempts = attempt or (r.attempts + 1)
      redis.call('HSET', jobs, id, encodeRecord(r))
      if r.attempts >= maxAttempts then
        local message = 'lease expired on attempt ' .. r.attempts .. ' (worker lost or stalled)'
        bury(dead, errors, id, errorJson('LeaseExpiredError', message, r.attempts, now), now)
        lost[#lost + 1], lostA[#lostA + 1] = id, r.attempts
        lostErr[#lostErr + 1] = { name = 'LeaseExpiredError', message = message }
      else
        requeue(waiting, r, id, r.due)
        back[#back + 1], backA[#backA + 1] = id, r.attempts
        if minDue == nil or r.due < minDue then minDue = r.due end
      end
    end
  end
  if minDue ~= nil then wakeIfEarlier(ARGV[6], before, minDue, now) end
  if #back > 0 then logEvent(log, logLen, 'recovered', { 'ids', cjson.encode(back), 'a', cjson.encode(backA) }) end
  if #dropped > 0 or #lost > 0 then waiters = waiters or waitersChannel(log) end
  if #dropped > 0 then
    dropReports(jobs, dropped)
    local fields = { 'ids', cjson.encode(dropped), 'a', cjson.encode(droppedA) }
    logEvent(log, logLen, 'cancelled', fields)
    tellWaiters(waiters, 'cancelled', fields)
  end
  if #lost > 0 then
    local fields = { 'ids', cjson.encode(lost), 'a', cjson.encode(lostA), 'err', cjson.encode(lostErr) }
    logEvent(log, logLen, 'dead', fields)
    tellWaiters(waiters, 'dead', fields)
  end
end

-- 3. Reserve due tasks: the record stays as it is; the reservation goes to `running`.
local out = { now, -1, refused, stamp }
local allowed, gateWait = admissionAllow(limits, active, now, count)
local picked = takeDue(waiting, jobs, KEYS[14], now, allowed)
for i, id in ipairs(picked.corrupt) do
  -- a record missing or unreadable (CorruptTaskError), or a deadline passed (TaskExpiredError)
  local reason, name = picked.reasons[i], picked.names[i] or 'CorruptTaskError'
  bury(dead, errors, id, errorJson(name, reason, 0, now), now)
  local fields = { 'ids', cjson.encode({ id }), 'a', '[0]', 'err', cjson.encode({ { name = name, message = reason } }) }
  logEvent(log, logLen, 'dead', fields)
  waiters = waiters or waitersChannel(log)
  tellWaiters(waiters, 'dead', fields)
end
local ids, dues = picked.ids, picked.dues
if #ids > 0 then
  local leases, zadd, held = {}, {}, {}
  local nl, nz, nh, no = 0, 0, 0, #out
  local deadline = now + lease
  local prefix, suffix = stamp .. ':', ':' .. ARGV[9]
  for i, id in ipairs(ids) do
    local attempt = picked.attempts[i] + 1
    -- NOTE: hot path: concatenation, not string.format (a fifth of the cost); attempt 1 needs no conversion.
    local token = prefix .. (attempt == 1 and '1' or attempt) .. ':' .. dues[i] .. suffix
    leases[nl + 1], leases[nl + 2], nl = id, token, nl + 2
    zadd[nz + 1], zadd[nz + 2], nz = deadline, id, nz + 2
    nh = nh + 1
    held[nh] = id
    out[no + 1], out[no + 2], out[no + 3], out[no + 4], no = id, attempt, dues[i], picked.payloads[i], no + 4
  end
  admissionCharge(limits, nz / 2)
  if nz > 0 then
    redis.call('HSET', running, unpack(leases))
    redis.call('ZADD', active, unpack(zadd))
    redis.call('SET', KEYS[8], rid .. stamp .. '\n' .. cjson.encode(held), 'PX', lease)
    if recordedValue() == 's' then
      local startedA, startedS = {}, {}
      for i = 1, nh do startedA[i], startedS[i] = leaseAttemptStartText(leases[i * 2]) end
      logEvent(log, logLen, 'started', { 'ids', cjson.encode(held), 'a', jsonNumbers(startedA), 's', jsonNumbers(startedS), 'm', ARGV[9] })
    end
  end
end

-- 4. Tell the worker when to look again: at once after a full batch (some may have been buried),
--    else at the next due time.
local taken = #ids + #picked.corrupt
if taken >= count or picked.again then
  out[2] = 0
elseif allowed < count and taken >= allowed then
  -- held back by a limit: look again when the rate allows the next start (or a freed slot wakes us)
  out[2] = gateWait
else
  local head = headScore(waiting)
  if head ~= nil then
    local delay = head - now
    if delay < 0 then delay = 0 end
    out[2] = delay
  end
end
if picked.wake ~= nil and out[2] ~= 0 and (out[2] == -1 or picked.wake < out[2]) then out[2] = picked.wake end
return out
