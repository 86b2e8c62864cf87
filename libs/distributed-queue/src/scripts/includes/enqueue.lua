-- Where a task entering its queue goes (a submit, a flow node released), collected per call and written at
-- once: due now and of a group, its group's queue by its turn (due + priority x the aging step, see
-- groups.lua); due now with a priority, the turn queue of its level (see priority.lua); else the waiting set
-- by its due time.
--- @include "includes/groups"
--- @include "includes/wake-if-earlier"

-- A batch for the waiting set `ws` of a type whose limits hash is `limitsKey`; `inSeqOrder`: its tasks come
-- in sequence order (a submit's new ones), so the waiting set takes them in one pass.
local function enqueueBatch(ws, limitsKey, inSeqOrder)
  return { ws = ws, limits = limitsKey, inSeqOrder = inSeqOrder, step = nil, minDue = nil, grouped = false, groups = {},
    wDues = {}, wMembers = {}, wSeqs = {}, tScores = {}, tMembers = {}, tSeqs = {} }
end

-- Adds a task (its waiting-set member and seq) due at `due`, of group `g` ('' none) and priority `p`.
local function enqueue(q, due, now, g, p, member, seq)
  if due <= now and g ~= '' then
    local turn = due
    if p > 0 then
      q.step = q.step or agingStep(q.limits)
      turn = due + p * q.step
    end
    local args = q.groups[g]
    if args == nil then
      args = {}
      q.groups[g] = args
    end
    args[#args + 1], args[#args + 2] = turn, member
    q.grouped = true
  elseif due <= now and p > 0 then
    q.step = q.step or agingStep(q.limits)
    local t = #q.tMembers + 1
    q.tScores[t], q.tMembers[t], q.tSeqs[t] = due + p * q.step, member, seq
  else
    local w = #q.wMembers + 1
    q.wDues[w], q.wMembers[w], q.wSeqs[w] = due, member, seq
  end
  if q.minDue == nil or due < q.minDue then q.minDue = due end
end

-- Writes the batch and wakes the workers on `channel`: when tasks entered groups' queues (the waiting set
-- may be empty), or when the earliest due time moved earlier than `before` (see wake-if-earlier.lua).
local function enqueueFlush(q, channel, before, now)
  if q.minDue == nil then return end
  if #q.wMembers > 0 then
    if q.inSeqOrder then wsAddMany(q.ws, q.wDues, q.wMembers, q.wSeqs) else wsAddBatch(q.ws, q.wDues, q.wMembers, q.wSeqs) end
  end
  if #q.tMembers > 0 then wsAddBatch(turnsOf(q.ws), q.tScores, q.tMembers, q.tSeqs) end
  if q.grouped then
    groupsPromote(q.ws, q.groups)
    redis.call('PUBLISH', channel, 'w:0')
  end
  wakeIfEarlier(channel, before, q.minDue, now)
end
