-- Moves a waiting task (record `rec`, parsed `r`) to due time `dueAt`: it keeps its submission order; one
-- waiting its turn (of its priority, in its group) goes back to the waiting set, and takes a new turn when
-- due again. Wakes the workers when it is now due before everything else. Returns false when it is not
-- waiting. Needs includes record, head-score, wake-if-earlier and groups.
local function moveDue(waiting, jobs, id, rec, r, dueAt, channel, now)
  local where, g = whereWaiting(waiting, r, id)
  if where == nil then return false end
  local member = memberOf(r.seq, id)
  if where == WAITS_TURN then wsRemove(turnsOf(waiting), member, r.seq) end
  if where == WAITS_GROUP then groupRemoveDue(waiting, g, member) end
  local before = headScore(waiting)
  if string.byte(rec, 1) == 126 then
    -- a bare record has no due time of its own: its score is enough
    r.due = dueAt
    redis.call('HSET', jobs, id, encodeRecord(r))
  end
  wsAdd(waiting, dueAt, member, r.seq)
  wakeIfEarlier(channel, before, dueAt, now)
  return true
end
