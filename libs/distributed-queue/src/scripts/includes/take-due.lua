-- The reserve's choice of tasks (take-15.lua): up to `count` due tasks in turn order (see priority.lua),
-- removed from waiting. Due tasks of a priority met in the waiting set are promoted into the turn queue on
-- the way. A task in the waiting set due at d has a turn of d or later, so the turn queue's head goes first
-- only while no waiting task is due at or before its turn.
-- Returns { ids, dues (the due times reservations keep), attempts, payloads, corrupt (ids whose record is
-- missing or unreadable, or whose deadline passed, removed from waiting: the caller buries them), reasons,
-- names (per corrupt position: the error's name when not CorruptTaskError), again (steps ran out with due
-- tasks maybe left: look again at once) }.
-- Tasks of a group (see groups.lua) move into their group's queue when due, and groups take turns.
-- NOTE: hot path: with no task of a priority or a group, one wsTake, one ZRANGE of the missing turn queue,
-- one GET of the missing count of grouped tasks and one HMGET of the missing groups of tasks.
--- @include "includes/record"
--- @include "includes/head-score"
--- @include "includes/priority"
--- @include "includes/group-rate"

local TAKE_BUDGET = 512 -- waiting-set members one call reads at most beyond `count` (moved ones)
local LOOKAHEAD = 64 -- read past what is needed once tasks of a priority show up: they only move on
local TURN_MAX = 9007199254740992 -- 2^53: past every turn

local function takeDue(ws, jobs, limitsKey, now, count)
  local out = { ids = {}, dues = {}, attempts = {}, payloads = {}, corrupt = {}, reasons = {}, names = {}, again = false }
  local n, read, step = 0, 0, nil
  -- moves into the turn queue and count changes per priority, written once per step / call
  local moves = { scores = {}, members = {}, seqs = {} }
  local toGroups = {} -- group -> { turn, member, ... } moved in this step
  local counted = {}
  local function tally(p, d)
    if p > 0 then counted[p] = (counted[p] or 0) + d end
  end
  local budget = count + TAKE_BUDGET
  -- while any group has due tasks, every due task goes through the groups' rotation ('' for tasks without one)
  local grouping = tonumber(redis.call('GET', ws .. ':gn') or '0') > 0
  if grouping then groupsRateWake(ws, now) end
  local k = turnHead(ws)
  local fast = k == nil and not grouping
  local function reserve(id, attempts, payload, due)
    n = n + 1
    out.ids[n], out.attempts[n], out.payloads[n], out.dues[n] = id, attempts, payload, due
  end
  -- A task whose deadline passed starts no attempt: the caller buries it (TaskExpiredError). Returns true then.
  local function expired(id, expires)
    if expires == nil or expires > now then return false end
    local c = #out.corrupt + 1
    out.corrupt[c], out.names[c] = id, 'TaskExpiredError'
    out.reasons[c] = string.format('not started by its deadline (%.0f)', expires)
    return true
  end
  while grouping or n < count do
    if read >= budget then
      out.again = true
      break
    end
    local need = count - n
    if grouping then need = budget - read end
    local members, dues, fromTurns = nil, nil, false
    if fast then
      members, dues = wsTake(ws, now, need)
    else
      local head = headScore(ws)
      if head ~= nil and head <= now and (k == nil or head <= k or grouping) then
        local upper = now
        if k ~= nil and k < now and not grouping then upper = k end
        members, dues = wsTake(ws, upper, math.min(need + LOOKAHEAD, budget - read))
      elseif k ~= nil then
        local bound = TURN_MAX
        if head ~= nil and head <= now then bound = head - 0.5 end
        members, dues = wsTake(turnsOf(ws), bound, need)
        fromTurns = true
      else
        break
      end
    end
    if #members == 0 then break end
    read = read + #members
    local ids = {}
    for i, member in ipairs(members) do ids[i] = idOfMember(member) end
    local recs = redis.call('HMGET', jobs, unpack(ids))
    local groups = groupsOf(ws, ids)
    local promoted = false
    for i, id in ipairs(ids) do
      local attempts, payload, p, due, place, expires = reservedPayload(recs[i], dues[i])
      if payload == nil then
        out.corrupt[#out.corrupt + 1] = id
        out.reasons[#out.reasons + 1] = recs[i] and 'task record is unreadable' or 'task record is missing'
      elseif groups[i] or grouping then
        grouping = true
        if not fromTurns then recordFallsDue(jobs, id, recs[i], dues[i]) end
        -- a retried task of a group takes back its place (its first due time), ahead of later ones
        local turn = place or tonumber(dues[i])
        if p > 0 and not fromTurns then
          step = step or agingStep(limitsKey)
          turn = turn + p * step
        end
        local g = groups[i] or ''
        local args = toGroups[g]
        if args == nil then
          args = {}
          toGroups[g] = args
        end
        args[#args + 1], args[#args + 2] = turn, members[i]
        promoted = true
      elseif p > 0 and not fromTurns then
        recordFallsDue(jobs, id, recs[i], dues[i])
        step = step or agingStep(limitsKey)
        local m = #moves.members + 1
        moves.scores[m], moves.members[m], moves.seqs[m] = tonumber(dues[i]) + p * step, members[i], (splitSeqTag(members[i]))
        promoted = true
      elseif n >= count then
        -- read ahead past what was needed: back to its place
        wsAdd(ws, dues[i], members[i], (splitSeqTag(members[i])))
      elseif fromTurns then
        if not expired(id, expires) then reserve(id, attempts, payload, string.format('%.0f', due)) end
        tally(p, -1)
      elseif not expired(id, expires) then
        reserve(id, attempts, payload, dues[i])
      end
    end
    if #moves.members > 0 then
      wsAddBatch(turnsOf(ws), moves.scores, moves.members, moves.seqs)
      moves = { scores = {}, members = {}, seqs = {} }
    end
    if next(toGroups) ~= nil then
      groupsPromote(ws, toGroups)
      toGroups = {}
    end
    -- the hot path found what there was, with no task of a priority or a group: nothing else to look at
    if fast and not promoted then return out end
    fast = false
    k = turnHead(ws)
  end
  if grouping and n < count then
    local members, groups, turns = groupsTake(ws, count - n, now, groupRate, groupRateAllow, groupRateCharge)
    if #members > 0 then
      local ids = {}
      for i, member in ipairs(members) do ids[i] = idOfMember(member) end
      local recs = redis.call('HMGET', jobs, unpack(ids))
      for i, id in ipairs(ids) do
        local attempts, payload, p, due, _, expires = reservedPayload(recs[i], turns[i])
        if payload == nil then
          groupFreed(ws, groups[i])
          out.corrupt[#out.corrupt + 1] = id
          out.reasons[#out.reasons + 1] = recs[i] and 'task record is unreadable' or 'task record is missing'
        elseif expired(id, expires) then
          groupFreed(ws, groups[i])
          tally(p, -1)
        else
          reserve(id, attempts, payload, string.format('%.0f', due))
          tally(p, -1)
        end
      end
    end
  end
  for p, d in pairs(counted) do priorityCount(ws, p, d) end
  if grouping then
    -- a group held out by its rate limit: look again when it may start (the earliest of them)
    local head = redis.call('ZRANGE', ws .. ':gt', 0, 0, 'WITHSCORES')
    out.wake = head[2] and math.max(1, tonumber(head[2]) - now) or nil
  end
  return out
end
