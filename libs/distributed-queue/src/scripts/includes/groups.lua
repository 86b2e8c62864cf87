-- Groups (issue 29): a task submitted with a group (e.g. a tenant id) waits in the type's waiting set by its
-- due time like any other; once due, the reserve moves it into its group's queue, and groups with due tasks
-- take turns: round-robin, weighted (stride scheduling: each group's pass moves on by taken / weight, the
-- group with the lowest pass goes next), so a group with a huge backlog gets its share and no more. Within a
-- group, tasks go by turn (due + priority x step, see priority.lua): due time, priority, FIFO.
--   HASH <ws>:gof            id -> group, while the task exists (waiting, running or dead)
--   ZSET <ws>:g:<len>:<g>    the due tasks of group g: member -> turn (<len>: g's length, so no name is
--                            another's prefix)
--   ZSET <ws>:gr             the rotation: group -> pass, for groups with due tasks that may run now
--   STRING <ws>:gv           the pass of the group served last: a group that enters the rotation starts there
--   HASH <ws>:gx             groups with due tasks held out of the rotation (paused, or at their concurrency)
--   ZSET <ws>:gb             group -> its waiting tasks (delayed and due): counts and the top groups by backlog
--   STRING <ws>:gn           the number of tasks in the groups' queues (all due)
--   ZSET <ws>:gq             the groups whose queue holds tasks ('' too), all at score 0: by name, for the
--                            pages of ready tasks (list-grouped-1.lua)
--   HASH <ws>:grun           group -> its reserved tasks (slots in use)
--   HASH <ws>:gset           'c:<g>' g's concurrency (overrides the type's 'gcc' in its limits hash), 'w:<g>'
--                            its weight (default 1), 'p:<g>' set while g is paused
-- A group with nothing due costs nothing: it is in no rotation, and the reserve never scans idle groups.
-- NOTE: keys built from the waiting set's name, so the slot guard of waiting-set.lua covers them.
--- @undeclared-keys
--- @include "includes/priority"

local function groupKey(ws, g)
  return ws .. ':g:' .. #g .. ':' .. g
end

-- The groups of `ids` (false for a task without one): one HMGET.
local function groupsOf(ws, ids)
  return redis.call('HMGET', ws .. ':gof', unpack(ids))
end

local function groupOf(ws, id)
  return redis.call('HGET', ws .. ':gof', id)
end

-- Adds `n` to group g's waiting tasks (the backlog the top groups are ranked by).
local function groupBacklog(ws, g, n)
  if tonumber(redis.call('ZINCRBY', ws .. ':gb', n, g)) <= 0 then redis.call('ZREM', ws .. ':gb', g) end
end

-- g's concurrency: its own, else the type's default (limits 'gcc', from the workers' `groupConcurrency`);
-- nil: none, and for '' (the queue of the due tasks without a group, see take-due.lua: in no group, so under
-- no group's limit, and no slots counted). NOTE: the limits hash is named as queue-keys.ts names it, beside
-- the waiting set.
local function groupLimit(ws, g)
  if g == '' then return nil end
  local own = redis.call('HGET', ws .. ':gset', 'c:' .. g)
  if own then return tonumber(own) end
  return tonumber(redis.call('HGET', (string.gsub(ws, ':wait$', ':limits')), 'gcc') or '')
end

-- Whether g may start another task now: not paused, below its concurrency.
local function groupMayRun(ws, g)
  if redis.call('HEXISTS', ws .. ':gset', 'p:' .. g) == 1 then return false end
  local limit = groupLimit(ws, g)
  if limit == nil then return true end
  return tonumber(redis.call('HGET', ws .. ':grun', g) or '0') < limit
end

-- Puts g (which has due tasks) in the rotation at the current pass, or holds it out while it may not run.
-- Returns true when it entered the rotation.
local function groupEnter(ws, g)
  if redis.call('ZSCORE', ws .. ':gr', g) then return false end
  if not groupMayRun(ws, g) then
    redis.call('HSET', ws .. ':gx', g, '1')
    return false
  end
  redis.call('HDEL', ws .. ':gx', g)
  redis.call('ZADD', ws .. ':gr', redis.call('GET', ws .. ':gv') or '0', g)
  return true
end

-- Moves due tasks into their groups' queues (by turn) and the groups into the rotation when they may run:
-- `moves` maps a group to { turn, member, turn, member, ... }; one ZADD per group, one count update.
local function groupsPromote(ws, moves)
  local n, named = 0, {}
  for g, args in pairs(moves) do
    redis.call('ZADD', groupKey(ws, g), unpack(args))
    n = n + #args / 2
    groupEnter(ws, g)
    named[#named + 1] = 0
    named[#named + 1] = g
  end
  if n > 0 then
    redis.call('INCRBY', ws .. ':gn', n)
    redis.call('ZADD', ws .. ':gq', unpack(named))
  end
end

-- g's queue is empty: out of the rotation (and of the held-out groups, `held`) and of the listing index.
local function groupEmptied(ws, g, held)
  redis.call('ZREM', ws .. ':gr', g)
  redis.call('ZREM', ws .. ':gq', g)
  if held then redis.call('HDEL', ws .. ':gx', g) end
end

-- `n` reservations of g ended (acknowledged, failed, handed back or expired): their slots are free; a group
-- held out at its concurrency comes back. Returns true when it did (the caller wakes the workers).
local function groupFreed(ws, g, n)
  if redis.call('HINCRBY', ws .. ':grun', g, -(n or 1)) <= 0 then redis.call('HDEL', ws .. ':grun', g) end
  if redis.call('HEXISTS', ws .. ':gx', g) == 0 then return false end
  return groupEnter(ws, g)
end

-- Removes a task from its group's queue (a cancel, a reschedule); returns 1 when it was there.
local function groupRemoveDue(ws, g, member)
  local key = groupKey(ws, g)
  if redis.call('ZREM', key, member) == 0 then return 0 end
  redis.call('INCRBY', ws .. ':gn', -1)
  if redis.call('EXISTS', key) == 0 then groupEmptied(ws, g, true) end
  return 1
end

-- Takes up to `count` due tasks from the groups in turn: each visit takes the group with the lowest pass and
-- gives it its share of what is left (at least one), within its concurrency and its rate limit (the
-- functions of group-rate.lua, passed in: that file includes this one). Returns members, their groups and
-- turns, in the order taken.
local function groupsTake(ws, count, now, rateOf, rateAllow, rateCharge)
  local members, groups, turns = {}, {}, {}
  local rotation, visits = ws .. ':gr', 0
  while #members < count and visits < count + 8 do
    visits = visits + 1
    local head = redis.call('ZRANGE', rotation, 0, 0, 'WITHSCORES')
    if head[1] == nil then break end
    local g, pass = head[1], tonumber(head[2])
    local ready = redis.call('ZCARD', rotation)
    local share = math.max(1, math.floor((count - #members) / ready))
    local limit = groupLimit(ws, g)
    local running = tonumber(redis.call('HGET', ws .. ':grun', g) or '0')
    if limit ~= nil and limit - running < share then share = limit - running end
    local rate = rateOf(ws, g)
    local wait = 0
    if share > 0 then share, wait = rateAllow(ws, g, now, share, rate) end
    local key = groupKey(ws, g)
    local got = {}
    if share > 0 then
      local scored = redis.call('ZRANGE', key, 0, share - 1, 'WITHSCORES')
      for i = 1, #scored, 2 do
        got[#got + 1] = scored[i]
        members[#members + 1], groups[#groups + 1], turns[#turns + 1] = scored[i], g, scored[i + 1]
      end
    end
    rateCharge(ws, g, rate, #got)
    if #got > 0 then
      redis.call('ZREM', key, unpack(got))
      redis.call('INCRBY', ws .. ':gn', -#got)
      -- NOTE: the '' queue holds no slots (its tasks' ends free none: they have no group) and no backlog
      if g ~= '' then
        redis.call('HINCRBY', ws .. ':grun', g, #got)
        groupBacklog(ws, g, -#got)
      end
    end
    redis.call('SET', ws .. ':gv', head[2])
    local weight = tonumber(redis.call('HGET', ws .. ':gset', 'w:' .. g) or '1')
    if redis.call('EXISTS', key) == 0 then
      groupEmptied(ws, g, false)
    elseif limit ~= nil and running + #got >= limit then
      redis.call('ZREM', rotation, g)
      redis.call('HSET', ws .. ':gx', g, '1')
    elseif wait > 0 then
      -- its rate allows no more now: out of the rotation until it does (see group-rate.lua)
      redis.call('ZREM', rotation, g)
      redis.call('ZADD', ws .. ':gt', now + wait, g)
    else
      redis.call('ZADD', rotation, pass + math.max(#got, 1) / weight, g)
    end
  end
  return members, groups, turns
end

-- The reservations of `ids` ended: their groups' slots are free (one HMGET when none has a group); `forget`:
-- the tasks are done, their groups are forgotten. Wakes the workers when a group held out at its
-- concurrency came back into the rotation.
local function groupsFreed(ws, ids, channel, forget)
  local groups = groupsOf(ws, ids)
  -- NOTE: hot path (every ack): one HMGET when no task has a group; else one update per group, one HDEL
  local ended, forgotten = {}, {}
  for i, g in ipairs(groups) do
    if g then
      ended[g] = (ended[g] or 0) + 1
      forgotten[#forgotten + 1] = ids[i]
    end
  end
  local woke = false
  for g, n in pairs(ended) do
    if groupFreed(ws, g, n) then woke = true end
  end
  if forget and #forgotten > 0 then redis.call('HDEL', ws .. ':gof', unpack(forgotten)) end
  if woke then redis.call('PUBLISH', channel, 'w:0') end
end

-- Removes a waiting task wherever it waits (the waiting set, the turn queue, its group's queue: for a task
-- without a group, the '' queue, which due tasks enter while any group has due tasks, see take-due.lua) and
-- forgets its group; returns 1 when it was waiting.
local function removeTask(ws, r, id)
  local g = groupOf(ws, id)
  local removed = removeWaiting(ws, r, id)
  if removed == 0 and groupRemoveDue(ws, g or '', memberOf(r.seq, id)) == 1 then
    removed = 1
    priorityCount(ws, r.priority, -1)
  end
  if removed == 1 and g then
    groupBacklog(ws, g, -1)
    redis.call('HDEL', ws .. ':gof', id)
  end
  return removed
end

-- Where a waiting task waits: WAITS_SET the waiting set (with its due time as Redis gives it), WAITS_TURN
-- the turn queue, WAITS_GROUP its group's queue (with the group; '' for a task without one: see removeTask);
-- nil when it is not waiting.
local WAITS_SET, WAITS_TURN, WAITS_GROUP = 1, 2, 3
local function whereWaiting(ws, r, id)
  local member = memberOf(r.seq, id)
  local due = wsScore(ws, member, r.seq)
  if due then return WAITS_SET, due end
  if r.priority > 0 and wsScore(turnsOf(ws), member, r.seq) then return WAITS_TURN end
  local g = groupOf(ws, id) or ''
  if redis.call('ZSCORE', groupKey(ws, g), member) then return WAITS_GROUP, g end
  return nil
end
