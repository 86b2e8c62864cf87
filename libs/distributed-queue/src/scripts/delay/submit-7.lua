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
--- @include "includes/head-score"
--- @include "includes/event-log"
--- @include "includes/record"
--- @include "includes/enqueue"
--- @include "includes/request-reply"

local waiting, jobs = KEYS[1], KEYS[2]
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

local before = headScore(waiting)
seq = redis.call('INCRBY', KEYS[3], n) - n
local first = seq
local flags = {}
local q = enqueueBatch(waiting, KEYS[7], true)
local logged = tonumber(ARGV[3]) > 0 and redis.call('EXISTS', KEYS[6]) == 1
local defaultPriority = nil -- read once, when a task has no priority of its own
local prioritized = {}
local ids, dues, delays, bodies = {}, {}, {}, {}
for i = 5, #ARGV, 5 do
  local id, value = ARGV[i], tonumber(ARGV[i + 2])
  seq = seq + 1
  local tag, digits = seqTag(seq)
  if id == '' then id = '#' .. digits end
  local due = value
  local mode, given = string.byte(ARGV[i + 1], 1), string.sub(ARGV[i + 1], 2)
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
    defaultPriority = defaultPriority or tonumber(redis.call('HGET', KEYS[7], 'dp') or '0')
    p = defaultPriority
  end
  local rec
  if p > 0 or expires then
    -- NOTE: a task with a priority or a deadline has the long record form, which holds them (see record.lua)
    rec = encodeRecord({ attempts = 0, seq = seq, due = due, flags = '', priority = p, expires = expires, payload = ARGV[i + 4] })
  else
    rec = tag .. ARGV[i + 4]
  end
  out[#out + 1] = id
  if redis.call('HSETNX', jobs, id, rec) == 1 then
    if p > 0 then prioritized[p] = (prioritized[p] or 0) + 1 end
    local g = ARGV[i + 3]
    if g ~= '' then
      redis.call('HSET', waiting .. ':gof', id, g)
      groupBacklog(waiting, g, 1)
    end
    -- NOTE: due now, of a group: straight into its group's queue, so that a small group's task never waits
    -- for a big group's backlog to be moved (see groups.lua)
    enqueue(q, due, now, g, p, tag .. id, seq)
    flags[#flags + 1] = '1'
    if logged then
      ids[#ids + 1], dues[#dues + 1], delays[#delays + 1], bodies[#bodies + 1] = id, due, due - now, ARGV[i + 4]
    end
  else
    flags[#flags + 1] = '0'
  end
  out[#out + 1] = tonumber(flags[#flags])
end
keepReply(KEYS[4], ARGV[4], string.format('%.0f', first) .. ':' .. table.concat(flags), ARGV[2])
for p, added in pairs(prioritized) do priorityCount(waiting, p, added) end
enqueueFlush(q, ARGV[1], before, now)
if #ids > 0 then
  logEvent(KEYS[5], tonumber(ARGV[3]), 'submitted',
    { 'ids', cjson.encode(ids), 'due', cjson.encode(dues), 'd', cjson.encode(delays), 'b', cjson.encode(bodies) })
end
return out
