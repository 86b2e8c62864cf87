-- Adding tasks as a submit does (submit-7.lua; dedupe-11.lua): per call a batch (`submitBatch`), per task
-- `submitTask`, then `submitEnd` (counts, the waiting set's writes and the wake-up, the `submitted` event).
--- @include "includes/head-score"
--- @include "includes/event-log"
--- @include "includes/record"
--- @include "includes/enqueue"

-- A batch of new tasks for the type of waiting set `waiting`; `logged`: its submits are logged for the history.
local function submitBatch(waiting, jobs, limitsKey, now, logged)
  return { waiting = waiting, jobs = jobs, limits = limitsKey, now = now, before = headScore(waiting),
    q = enqueueBatch(waiting, limitsKey, true), logged = logged, defaultPriority = nil, prioritized = {},
    ids = {}, dues = {}, delays = {}, bodies = {} }
end

-- Adds a task numbered `seq` (its place in the type's submission order) unless its id exists. `id` '':
-- generated from `seq`. `spec`: 'd' (value: delay ms) or 'a' (value: absolute ms), then its priority when
-- given (without one, the type's default), then its deadline when it has one ('x<ms>' absolute, 'y<ms>'
-- from now; see record.lua). `g`: its group ('' none). Returns its id and 1 when created, else 0.
local function submitTask(b, seq, id, spec, value, g, payload)
  local tag, digits = seqTag(seq)
  if id == '' then id = '#' .. digits end
  local now = b.now
  local due = value
  local mode, given = string.byte(spec, 1), string.sub(spec, 2)
  if mode == 100 then due = now + value end -- 'd'
  local expires = nil
  local x = string.find(given, '[xy]')
  if x then
    expires = tonumber(string.sub(given, x + 1))
    if string.byte(given, x) == 121 then expires = now + expires end -- 'y'
    given = string.sub(given, 1, x - 1)
  end
  local p = tonumber(given)
  if p == nil then
    b.defaultPriority = b.defaultPriority or tonumber(redis.call('HGET', b.limits, 'dp') or '0')
    p = b.defaultPriority
  end
  local rec
  if expires or (p > 0 and due <= now) then
    -- NOTE: a task with a deadline, or due now with a priority (straight into the turn queue or its group's
    -- queue, where its score is no due time), has the long record form, which holds them (see record.lua)
    rec = encodeRecord({ attempts = 0, seq = seq, due = due, flags = '', priority = p, expires = expires, payload = payload })
  else
    rec = shortRecord(tag, p, payload)
  end
  if redis.call('HSETNX', b.jobs, id, rec) == 0 then return id, 0 end
  if p > 0 then b.prioritized[p] = (b.prioritized[p] or 0) + 1 end
  if g ~= '' then
    redis.call('HSET', b.waiting .. ':gof', id, g)
    groupBacklog(b.waiting, g, 1)
  end
  -- NOTE: due now, of a group: straight into its group's queue, so that a small group's task never waits
  -- for a big group's backlog to be moved (see groups.lua)
  enqueue(b.q, due, now, g, p, tag .. id, seq)
  if b.logged then
    local n = #b.ids + 1
    b.ids[n], b.dues[n], b.delays[n], b.bodies[n] = id, due, due - now, payload
  end
  return id, 1
end

-- Writes what the batch's tasks need beyond their records, wakes the workers, logs the `submitted` event.
local function submitEnd(b, channel, stream, streamLen)
  for p, added in pairs(b.prioritized) do priorityCount(b.waiting, p, added) end
  enqueueFlush(b.q, channel, b.before, b.now)
  if #b.ids > 0 then
    logEvent(stream, streamLen, 'submitted',
      { 'ids', cjson.encode(b.ids), 'due', cjson.encode(b.dues), 'd', cjson.encode(b.delays), 'b', cjson.encode(b.bodies) })
  end
end
